import { Worker } from "node:worker_threads";
import {
  senderThreadSource,
  type FromSender,
  type SenderThreadData,
  type ThreadResult,
  type ToSender,
} from "./sender-thread";
import { ForbiddenAddress, type UrlGuard } from "./url-guard";

/** What one POST to an endpoint came to. */
export type AttemptResult = ThreadResult;

/** How long a receiver has to answer, headers included (API.md: a 2xx within 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Sockets kept open per endpoint origin, so a busy endpoint is not reconnected for every event. */
const SOCKETS_PER_ORIGIN = 32;

/**
 * POSTs deliveries from a thread of their own (sender-thread.ts) through an undici agent whose
 * DNS lookup is the SSRF guard's, run here: every address a name resolves to is checked before
 * the thread connects. IP-literal hosts (never looked up) are checked before the request.
 * Redirects are never followed: a 3xx is an answer like any non-2xx.
 */
export class DeliverySender {
  private readonly thread: Worker;
  private readonly pending = new Map<number, (result: AttemptResult) => void>();
  private nextId = 0;
  private queued: Extract<ToSender, { t: "posts" }>["list"] = [];
  private closed = false;
  /** URLs whose IP-literal check passed. */
  private readonly passed = new Set<string>();

  constructor(
    private readonly guard: UrlGuard,
    timeoutMs = DELIVERY_TIMEOUT_MS,
  ) {
    const data: SenderThreadData = {
      timeoutMs,
      socketsPerOrigin: SOCKETS_PER_ORIGIN,
      undiciPath: require.resolve("undici"),
    };
    this.thread = new Worker(senderThreadSource(), { eval: true, workerData: data });
    this.thread.on("message", (message: FromSender) => this.onMessage(message));
    this.thread.on("error", () => this.cutAll("the delivery thread failed"));
    this.thread.on("exit", () => this.cutAll("the service is stopping"));
    // Never what keeps the process alive: close() ends it, and an idle service may exit.
    this.thread.unref();
  }

  /** POSTs `body` to `url`, signed (in the thread) for `eventId` with each of `secrets`. */
  post(url: string, eventId: string, secrets: string[], body: string): Promise<AttemptResult> {
    try {
      if (!this.passed.has(url)) {
        this.guard.checkLiteral(new URL(url));
        // The guard's answer for a URL never changes: an endpoint's URL is parsed and checked once.
        if (this.passed.size >= 1_000) this.passed.clear();
        this.passed.add(url);
      }
    } catch (err) {
      return Promise.resolve({
        kind: "error",
        error: describe(err),
        forbidden: err instanceof ForbiddenAddress,
        ms: 0,
      });
    }
    if (this.closed)
      return Promise.resolve({ kind: "error", error: "the service is stopping", forbidden: false, ms: 0 });
    const id = this.nextId++;
    // Posts go to the thread in one message per turn of the event loop.
    if (this.queued.length === 0) setImmediate(() => this.flush());
    this.queued.push({ id, url, body, eventId, secrets });
    return new Promise((resolve) => this.pending.set(id, resolve));
  }

  /** Cuts every request in flight (shutdown): each answers an error, and the thread ends. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.send({ t: "close" });
  }

  private flush(): void {
    const list = this.queued;
    this.queued = [];
    if (list.length > 0) this.send({ t: "posts", list });
  }

  private send(message: ToSender): void {
    this.thread.postMessage(message);
  }

  private onMessage(message: FromSender): void {
    if (message.t === "results") {
      for (const { id, result } of message.list) {
        this.pending.get(id)?.(result);
        this.pending.delete(id);
      }
      return;
    }
    // A new connection: the guard resolves the name and checks every address it has.
    const { id, hostname, family, all } = message;
    this.guard.lookup(hostname, { family, all }, (err, address, addressFamily) => {
      if (err) {
        const forbidden = err instanceof ForbiddenAddress;
        this.send({ t: "lookup", id, error: { message: err.message, code: err.code, forbidden } });
      } else if (Array.isArray(address)) {
        this.send({ t: "lookup", id, addresses: address });
      } else {
        this.send({ t: "lookup", id, addresses: [{ address, family: addressFamily ?? 4 }] });
      }
    });
  }

  /** Answers every post not answered yet with an error (the thread is gone). */
  private cutAll(error: string): void {
    this.closed = true;
    for (const resolve of this.pending.values()) resolve({ kind: "error", error, forbidden: false, ms: 0 });
    this.pending.clear();
  }
}

/** An error's message for the delivery log: the kind of failure, never a URL's credentials. */
function describe(err: unknown): string {
  if (err instanceof ForbiddenAddress) return `forbidden address: ${err.message}`;
  const e = err as NodeJS.ErrnoException;
  return (e.code ? `${e.code}: ` : "") + String(e.message ?? err).slice(0, 200);
}
