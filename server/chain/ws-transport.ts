import { makeError } from "ethers";
import WebSocket from "ws";

/** What errors name as the request: never the URL, whose path or query may hold an API key. */
const REQUEST_NAME = "JSON-RPC over the RPC URL's WebSocket";

interface Pending {
  resolve(answer: unknown): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
  /** Our ids, in the order of the caller's calls, and the caller's own id for each. */
  ids: Array<{ ours: number; theirs: unknown }>;
  answers: Map<number, Record<string, unknown>>;
  batch: boolean;
}

/**
 * JSON-RPC over one WebSocket URL, as HttpJsonRpcTransport is over HTTP: `send` takes one call or
 * a batch and answers the parsed answer, within `timeoutMs`. The socket is opened on first use
 * and again after it closes. Ids are the transport's own (several callers share the socket) and
 * are given back as the caller sent them. Failures keep ethers' codes (TIMEOUT, SERVER_ERROR): a
 * socket that closes with calls in flight fails them, which a broadcast reads as a lost answer.
 */
export class WsJsonRpcTransport {
  private socket?: WebSocket;
  private opening?: Promise<WebSocket>;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  async send(body: unknown): Promise<unknown> {
    if (this.closed) throw makeError("the RPC transport is closed", "UNSUPPORTED_OPERATION", { operation: "send" });
    const deadline = Date.now() + this.timeoutMs;
    const socket = await this.open(deadline);
    const batch = Array.isArray(body);
    const calls = (batch ? body : [body]) as Array<Record<string, unknown>>;
    const ids = calls.map((call) => ({ ours: this.nextId++, theirs: call?.id }));
    const sent = calls.map((call, i) => ({ ...call, id: ids[i].ours }));
    return new Promise((resolve, reject) => {
      const entry: Pending = {
        resolve,
        reject,
        ids,
        batch,
        answers: new Map(),
        timer: setTimeout(
          () => {
            this.forget(entry);
            reject(makeError("request timeout", "TIMEOUT", { request: REQUEST_NAME }));
          },
          Math.max(0, deadline - Date.now()),
        ),
      };
      for (const { ours } of ids) this.pending.set(ours, entry);
      socket.send(JSON.stringify(batch ? sent : sent[0]), (err) => {
        if (!err) return;
        this.forget(entry);
        reject(lost(err.message));
      });
    });
  }

  close(): void {
    this.closed = true;
    this.socket?.terminate();
    this.failAll("the RPC transport is closed");
  }

  private open(deadline: number): Promise<WebSocket> {
    if (this.socket?.readyState === WebSocket.OPEN) return Promise.resolve(this.socket);
    this.opening ??= new Promise<WebSocket>((resolve, reject) => {
      const socket = new WebSocket(this.url, { handshakeTimeout: Math.max(1, deadline - Date.now()) });
      socket.once("open", () => {
        this.socket = socket;
        this.opening = undefined;
        resolve(socket);
      });
      socket.on("message", (data) => this.answer(String(data)));
      socket.on("error", (err) => {
        if (this.opening && this.socket !== socket) {
          this.opening = undefined;
          reject(lost(err.message));
        }
      });
      socket.on("close", () => {
        if (this.socket === socket) this.socket = undefined;
        if (this.opening && this.socket !== socket) {
          this.opening = undefined;
          reject(lost("connection closed"));
        }
        this.failAll("connection closed");
      });
    });
    return this.opening;
  }

  private answer(text: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return;
    }
    for (const answer of (Array.isArray(parsed) ? parsed : [parsed]) as Array<Record<string, unknown>>) {
      if (typeof answer?.id !== "number") continue; // a subscription's notification: not ours
      const entry = this.pending.get(answer.id);
      if (!entry) continue;
      entry.answers.set(answer.id, answer);
      if (entry.answers.size < entry.ids.length) continue;
      this.forget(entry);
      const answers = entry.ids.map(({ ours, theirs }) => ({ ...entry.answers.get(ours), id: theirs }));
      entry.resolve(entry.batch ? answers : answers[0]);
    }
  }

  private forget(entry: Pending): void {
    clearTimeout(entry.timer);
    for (const { ours } of entry.ids) this.pending.delete(ours);
  }

  private failAll(reason: string): void {
    for (const entry of new Set(this.pending.values())) {
      this.forget(entry);
      entry.reject(lost(reason));
    }
  }
}

function lost(reason: string): Error {
  return makeError(`WebSocket JSON-RPC failed: ${reason}`, "SERVER_ERROR", { request: REQUEST_NAME });
}
