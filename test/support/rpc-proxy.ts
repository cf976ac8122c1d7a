/**
 * A small JSON-RPC proxy for tests: it sits between the service and a `hardhat node` and forwards
 * every POST body (single call or batch) to the node, while it can
 * - add latency each way (`latencyMs`, settable at any time),
 * - count calls per method and keep a bounded log of the methods seen, in order,
 * - refuse a call with a JSON-RPC error without forwarding it (`refuse`), or answer it with a result of
 *   our choosing, say a null receipt for a mined transaction (`answerWith`),
 * - forward a call but lose its answer: socket destroyed, an HTML 502 from a "gateway", or no answer at
 *   all (`loseAnswer`),
 * - answer a call with an HTTP error status (a 503 from a provider's gateway), without forwarding it
 *   (`failWith`),
 * - stop listening altogether and come back on the same port (`down` / `up`),
 * - fail every request the same way, as an RPC provider in an outage does (`mode`): an HTML 502, a
 *   503, a 429, no answer at all, or the connection reset; and forward to another node (`retarget`: a node
 *   far behind, say),
 * - judge a forwarded call by its params and the node's result, and answer an error instead
 *   (`judgeAnswers`: a hosted node's caps on eth_getLogs, say),
 * - hold a call for a while before forwarding it (`delay`: a slow node, one call at a time),
 * - forward WebSocket JSON-RPC too (a `ws://` URL on the same port: `wsUrl`), counting its calls
 *   like the others, with the same latency each way; cut every socket (`dropWebSockets`), or keep
 *   them open but pass on no subscription notification (`silentSubscriptions`: a silent socket).
 *
 * Fault rules match a method name and, optionally, a predicate on the call's params; each applies a
 * given number of times, first rule first. In a batch (a JSON array body) with at least one matching
 * call, a refusal or a chosen answer replaces the answer of each matching call (those are not
 * forwarded) and the other calls are forwarded, as a node answers each call of a batch on its own;
 * a lost answer loses the answer to the whole batch (forwarded whole). A batch uses up one
 * application of the rule. Calls are counted whatever becomes of them.
 *
 * If the node cannot be reached, the proxy answers HTTP 502 with an HTML body, as a gateway would.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import WebSocket, { WebSocketServer } from "ws";

/** How an answer is lost: the socket destroyed, an HTML 502 from a gateway, or no answer ever. */
export type LossMode = "drop" | "502" | "timeout";

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface RuleOptions {
  /** How many requests the rule applies to (default 1; Infinity for all). */
  times?: number;
  /** Only calls whose params satisfy this match (default: every call of the method). */
  when?: (params: readonly unknown[]) => boolean;
}

export interface LoseOptions extends RuleOptions {
  /** Default "drop". */
  mode?: LossMode;
}

export interface RefuseOptions extends RuleOptions {
  /** Default `{ code: -32000, message: "refused by RpcProxy" }`. */
  error?: JsonRpcErrorObject;
}

/** A fault rule as set; `done` resolves once it has been applied `times` times. */
export interface FaultRule {
  readonly method: string;
  /** Applications left. */
  readonly remaining: number;
  /** Requests it has been applied to. */
  readonly hits: number;
  readonly done: Promise<void>;
}

/** Decides from a call's params and the node's result whether to answer an error instead. */
export type AnswerJudge = (params: readonly unknown[], result: unknown) => JsonRpcErrorObject | undefined;

export interface ProxyOptions {
  latencyMs?: number;
  /** How many methods `log` keeps, the most recent ones (default 1000). */
  logLimit?: number;
  /** How long a "timeout" loss holds the socket before destroying it (default 10 minutes). */
  holdMs?: number;
}

/** What a matching call is answered instead of the node's answer. */
export type ChosenAnswer = { result: unknown } | { error: JsonRpcErrorObject };

type Action =
  | { kind: "lose"; mode: LossMode }
  | { kind: "answer"; answer: ChosenAnswer }
  | { kind: "delay"; ms: number }
  | { kind: "status"; status: number };

interface Rule extends FaultRule {
  readonly action: Action;
  readonly when?: (params: readonly unknown[]) => boolean;
  remaining: number;
  hits: number;
  resolve(): void;
}

interface Call {
  id: unknown;
  method: string;
  params: readonly unknown[];
}

/**
 * What the proxy does with every request, before any rule: forward it, answer an HTML 502 or a 429
 * without forwarding, hold it unanswered (until `holdMs` or `mode` changes), or reset its connection.
 */
export type ProxyMode = "forward" | "502" | "503" | "429" | "hang" | "reset";

/** The body nginx sends with a 502. */
export const GATEWAY_502_BODY =
  "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RpcProxy {
  /** Delay added before forwarding a request and again before answering it. */
  latencyMs: number;
  /** JSON-RPC calls received per method (each call of a batch counts). */
  readonly calls = new Map<string, number>();
  /** The methods received, oldest first, at most `logLimit` of the most recent. */
  readonly log: string[] = [];
  /** HTTP requests received (a batch is one). */
  httpRequests = 0;
  /** See ProxyMode; held requests are cut when it changes back to "forward". */
  private currentMode: ProxyMode = "forward";
  /** True: WebSocket subscriptions' notifications are dropped (the sockets stay open). */
  silentSubscriptions = false;
  /** WebSocket connections made through the proxy (each reconnect is one more). */
  webSocketConnections = 0;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sockets = new Set<{ client: WebSocket; upstream: WebSocket }>();

  private readonly rules: Rule[] = [];
  private readonly judges: Array<{ method: string; judge: AnswerJudge }> = [];
  private readonly held = new Set<{ socket: Socket; timer: NodeJS.Timeout }>();
  private agent = new http.Agent({ keepAlive: true });
  private target: URL;
  private readonly logLimit: number;
  private readonly holdMs: number;
  private listening = false;

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
    targetUrl: string,
    opts: ProxyOptions,
  ) {
    this.target = new URL(targetUrl);
    this.latencyMs = opts.latencyMs ?? 0;
    this.logLimit = opts.logLimit ?? 1000;
    this.holdMs = opts.holdMs ?? 600_000;
    this.listening = true;
  }

  /** Starts a proxy on 127.0.0.1 (a free port) in front of `targetUrl`. */
  static async start(targetUrl: string, opts: ProxyOptions = {}): Promise<RpcProxy> {
    const server = http.createServer();
    await listen(server, 0);
    const proxy = new RpcProxy(server, (server.address() as AddressInfo).port, targetUrl, opts);
    server.on("request", (req, res) => {
      proxy.handle(req, res).catch(() => req.socket.destroy());
    });
    server.on("upgrade", (req, socket, head) => {
      proxy.wss.handleUpgrade(req, socket, head, (client) => proxy.pipeWebSocket(client));
    });
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The proxy's WebSocket URL (the node's own WebSocket JSON-RPC, on its HTTP port). */
  get wsUrl(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  /** Cuts every WebSocket connection through the proxy (a client reconnects). */
  dropWebSockets(): void {
    for (const { client, upstream } of this.sockets) {
      client.terminate();
      upstream.terminate();
    }
    this.sockets.clear();
  }

  /** One client socket, forwarded to a socket of its own to the node; calls counted as they go. */
  private pipeWebSocket(client: WebSocket): void {
    this.webSocketConnections += 1;
    const target = new URL(this.target);
    target.protocol = target.protocol === "https:" ? "wss:" : "ws:";
    const upstream = new WebSocket(target);
    const pair = { client, upstream };
    this.sockets.add(pair);
    const queued: string[] = [];
    const close = () => {
      this.sockets.delete(pair);
      client.terminate();
      upstream.terminate();
    };
    upstream.on("open", () => {
      for (const message of queued.splice(0)) upstream.send(message);
    });
    client.on("message", (data) => {
      const text = String(data);
      this.record(parseCalls(Buffer.from(text))?.calls ?? []);
      void sleep(this.latencyMs).then(() => {
        if (upstream.readyState === WebSocket.OPEN) upstream.send(text);
        else queued.push(text);
      });
    });
    upstream.on("message", (data) => {
      const text = String(data);
      if (this.silentSubscriptions && text.includes('"eth_subscription"')) return;
      void sleep(this.latencyMs).then(() => {
        if (client.readyState === WebSocket.OPEN) client.send(text);
      });
    });
    for (const socket of [client, upstream]) {
      socket.on("close", close);
      socket.on("error", close);
    }
  }

  /** All calls received since the last `resetCounts`. */
  total(): number {
    let sum = 0;
    for (const count of this.calls.values()) sum += count;
    return sum;
  }

  /** Clears the counts, the log and `httpRequests`. */
  resetCounts(): void {
    this.calls.clear();
    this.log.length = 0;
    this.httpRequests = 0;
  }

  /** Forwards matching calls (so they take effect on the node) but the client never gets the answer. */
  loseAnswer(method: string, opts: LoseOptions = {}): FaultRule {
    return this.addRule(method, { kind: "lose", mode: opts.mode ?? "drop" }, opts);
  }

  /** Answers matching calls with a JSON-RPC error, without forwarding them. */
  refuse(method: string, opts: RefuseOptions = {}): FaultRule {
    const error = opts.error ?? { code: -32000, message: "refused by RpcProxy" };
    return this.addRule(method, { kind: "answer", answer: { error } }, opts);
  }

  /**
   * Answers the whole request that holds a matching call with HTTP `status` (a text body, as a
   * provider's gateway sends), without forwarding any of it.
   */
  failWith(method: string, status: number, opts: RuleOptions = {}): FaultRule {
    return this.addRule(method, { kind: "status", status }, opts);
  }

  /** Holds matching calls (their whole request) `ms` before forwarding them; the answer then comes as usual. */
  delay(method: string, ms: number, opts: RuleOptions = {}): FaultRule {
    return this.addRule(method, { kind: "delay", ms }, opts);
  }

  /** Answers matching calls with `answer` (a result, or an error), without forwarding them. */
  answerWith(method: string, answer: ChosenAnswer, opts: RuleOptions = {}): FaultRule {
    return this.addRule(method, { kind: "answer", answer }, opts);
  }

  /**
   * Forwards calls of `method` and hands each one's params and the node's result to `judge`: an
   * error it returns is answered instead of the result (in a batch, for that call alone). Until the
   * returned function is called.
   */
  judgeAnswers(method: string, judge: AnswerJudge): () => void {
    const entry = { method, judge };
    this.judges.push(entry);
    return () => {
      const i = this.judges.indexOf(entry);
      if (i >= 0) this.judges.splice(i, 1);
    };
  }

  get mode(): ProxyMode {
    return this.currentMode;
  }

  /** Fails every request from now on (see ProxyMode); "forward" ends it and cuts the requests held. */
  set mode(mode: ProxyMode) {
    this.currentMode = mode;
    if (mode !== "hang") this.releaseHeld();
  }

  /** Forwards to `targetUrl` from now on (kept-alive connections to the old node are closed). */
  retarget(targetUrl: string): void {
    this.target = new URL(targetUrl);
    this.agent.destroy();
    this.agent = new http.Agent({ keepAlive: true });
  }

  /** Removes every fault rule (their `done` never resolves). */
  clearRules(): void {
    this.rules.length = 0;
  }

  /** Stops listening and cuts every open connection: connecting is refused until `up()`. */
  async down(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.releaseHeld();
    this.dropWebSockets();
    this.server.closeAllConnections();
    await closed;
  }

  /** Listens again on the same port. */
  async up(): Promise<void> {
    if (this.listening) return;
    await listen(this.server, this.port);
    this.listening = true;
  }

  async close(): Promise<void> {
    await this.down();
    this.agent.destroy();
  }

  private addRule(method: string, action: Action, opts: RuleOptions): FaultRule {
    let resolve = () => {};
    const done = new Promise<void>((r) => (resolve = r));
    const rule: Rule = { method, action, when: opts.when, remaining: opts.times ?? 1, hits: 0, done, resolve };
    this.rules.push(rule);
    return rule;
  }

  /** The first live rule matching one of `calls`, used up once. */
  private takeRule(calls: Call[]): Rule | undefined {
    const rule = this.rules.find(
      (r) => r.remaining > 0 && calls.some((c) => c.method === r.method && (r.when?.(c.params) ?? true)),
    );
    if (!rule) return undefined;
    rule.remaining -= 1;
    rule.hits += 1;
    if (rule.remaining <= 0) {
      this.rules.splice(this.rules.indexOf(rule), 1);
      rule.resolve();
    }
    return rule;
  }

  private record(calls: Call[]): void {
    for (const { method } of calls) {
      this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
      this.log.push(method);
    }
    if (this.log.length > this.logLimit) this.log.splice(0, this.log.length - this.logLimit);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readBody(req);
    this.httpRequests += 1;
    const parsed = parseCalls(body);
    this.record(parsed?.calls ?? []);
    switch (this.currentMode) {
      case "502":
        send(res, 502, "text/html", GATEWAY_502_BODY);
        return;
      case "503":
        send(res, 503, "text/plain", "Service Unavailable");
        return;
      case "429":
        send(
          res,
          429,
          "application/json",
          JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: 429, message: "Too Many Requests" } }),
        );
        return;
      case "hang":
        this.hold(req.socket);
        return;
      case "reset":
        req.socket.resetAndDestroy();
        return;
      case "forward":
        break;
    }
    const rule = parsed ? this.takeRule(parsed.calls) : undefined;
    await sleep(this.latencyMs + (rule?.action.kind === "delay" ? rule.action.ms : 0));

    if (rule?.action.kind === "status") {
      send(res, rule.action.status, "text/plain", `HTTP ${rule.action.status} from RpcProxy`);
      return;
    }
    if (rule?.action.kind === "answer" && parsed) {
      await this.answerChosen(res, parsed, rule, rule.action.answer);
      return;
    }

    let status = 502;
    let contentType = "text/html";
    let answer: Buffer | string = GATEWAY_502_BODY;
    try {
      ({ status, contentType, body: answer } = await this.forward(body, parsed?.calls ?? []));
    } catch {
      // the node is unreachable: answer as a gateway would
    }
    if (parsed && status === 200 && parsed.calls.some((c) => this.judges.some((j) => j.method === c.method))) {
      answer = this.judged(parsed, answer);
    }
    await sleep(this.latencyMs);

    if (rule?.action.kind === "lose") {
      switch (rule.action.mode) {
        case "drop":
          req.socket.destroy();
          return;
        case "502":
          send(res, 502, "text/html", GATEWAY_502_BODY);
          return;
        case "timeout":
          this.hold(req.socket);
          return;
      }
    }
    send(res, status, contentType, answer);
  }

  /** Answers the calls `rule` matches with `answer`, and forwards the others (a batch of them, if any). */
  private async answerChosen(
    res: http.ServerResponse,
    parsed: { batch: boolean; calls: Call[]; items: unknown[] },
    rule: Rule,
    answer: ChosenAnswer,
  ): Promise<void> {
    const matches = (c: Call) => c.method === rule.method && (rule.when?.(c.params) ?? true);
    const others = parsed.items.filter((_, i) => !matches(parsed.calls[i]));
    const forwarded = new Map<unknown, unknown>();
    if (others.length > 0) {
      try {
        const calls = parsed.calls.filter((c) => !matches(c));
        const { body } = await this.forward(Buffer.from(JSON.stringify(others)), calls);
        for (const one of JSON.parse(body.toString("utf8")) as Array<{ id: unknown }>) forwarded.set(one.id, one);
      } catch {
        // the node is unreachable: those calls go unanswered, as a gateway's partial failure would leave them
      }
    }
    const answers = parsed.calls.map((c) =>
      matches(c)
        ? { jsonrpc: "2.0", id: c.id, ...answer }
        : (forwarded.get(c.id) ?? { jsonrpc: "2.0", id: c.id, error: { code: -32603, message: "no answer" } }),
    );
    await sleep(this.latencyMs);
    send(res, 200, "application/json", JSON.stringify(parsed.batch ? answers : answers[0]));
  }

  /** The node's answer with the judges' errors in place of the results they refuse. */
  private judged(parsed: { batch: boolean; calls: Call[] }, answer: Buffer | string): Buffer | string {
    let json: unknown;
    try {
      json = JSON.parse(answer.toString());
    } catch {
      return answer;
    }
    const answers = (parsed.batch ? json : [json]) as Array<{ id: unknown; result?: unknown }>;
    if (!Array.isArray(answers)) return answer;
    const byId = new Map(parsed.calls.map((c) => [JSON.stringify(c.id), c]));
    const out = answers.map((a) => {
      const call = byId.get(JSON.stringify(a.id));
      if (!call || !("result" in a)) return a;
      for (const { method, judge } of this.judges) {
        if (method !== call.method) continue;
        const error = judge(call.params, a.result);
        if (error) return { jsonrpc: "2.0", id: a.id, error };
      }
      return a;
    });
    return JSON.stringify(parsed.batch ? out : out[0]);
  }

  /**
   * A kept-alive connection the node closed while it sat idle (hardhat node: after 5 s) is reset
   * before any answer: a read (no eth_sendRawTransaction among `calls`) goes again on a new
   * connection, once, as the service's own client does.
   */
  private async forward(body: Buffer, calls: Call[]): Promise<{ status: number; contentType: string; body: Buffer }> {
    try {
      return await this.forwardOnce(body);
    } catch (err) {
      const resendable = !calls.some((c) => c.method === "eth_sendRawTransaction");
      if (err instanceof StaleUpstream && resendable) return this.forwardOnce(body);
      throw err;
    }
  }

  private forwardOnce(body: Buffer): Promise<{ status: number; contentType: string; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const upstream = http.request(
        this.target,
        {
          method: "POST",
          agent: this.agent,
          headers: { "content-type": "application/json", "content-length": body.length },
        },
        (res) => {
          readBody(res).then(
            (answer) =>
              resolve({
                status: res.statusCode ?? 502,
                contentType: res.headers["content-type"] ?? "application/json",
                body: answer,
              }),
            reject,
          );
        },
      );
      upstream.on("error", (err: NodeJS.ErrnoException) =>
        reject(err.code === "ECONNRESET" && upstream.reusedSocket ? new StaleUpstream(err.message) : err),
      );
      upstream.end(body);
    });
  }

  private hold(socket: Socket): void {
    const entry = {
      socket,
      timer: setTimeout(() => {
        this.held.delete(entry);
        socket.destroy();
      }, this.holdMs).unref(),
    };
    this.held.add(entry);
    socket.once("close", () => {
      clearTimeout(entry.timer);
      this.held.delete(entry);
    });
  }

  private releaseHeld(): void {
    for (const { socket, timer } of this.held) {
      clearTimeout(timer);
      socket.destroy();
    }
    this.held.clear();
  }
}

function listen(server: http.Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** A reused kept-alive connection to the node, reset before it answered. */
class StaleUpstream extends Error {}

function readBody(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve(Buffer.concat(chunks)));
    stream.on("error", reject);
  });
}

function send(res: http.ServerResponse, status: number, contentType: string, body: Buffer | string): void {
  if (res.destroyed) return;
  res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/** The calls in a JSON-RPC body, or undefined if it is not one (it is then forwarded untouched). */
function parseCalls(body: Buffer): { batch: boolean; calls: Call[]; items: unknown[] } | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
  const batch = Array.isArray(json);
  const items: unknown[] = batch ? (json as unknown[]) : [json];
  const calls: Call[] = [];
  for (const item of items) {
    if (typeof item !== "object" || item === null) return undefined;
    const { id, method, params } = item as { id?: unknown; method?: unknown; params?: unknown };
    if (typeof method !== "string") return undefined;
    calls.push({ id: id ?? null, method, params: Array.isArray(params) ? params : [] });
  }
  return calls.length > 0 ? { batch, calls, items } : undefined;
}
