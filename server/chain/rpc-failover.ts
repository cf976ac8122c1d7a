import { makeError } from "ethers";
import { credentialFragments, credentialScrubber, maskUrl } from "../config/credentials";
import { HttpJsonRpcTransport } from "./http-transport";
import { isBareInternalError } from "./unanswered";
import { WsJsonRpcTransport } from "./ws-transport";

/** How one RPC URL stands: answering, left out after a failure, or answering from a node that lags. */
export type RpcUrlStatus = "ok" | "down" | "behind";

/** One URL's state as /health, GET /chains and /metrics show it: the URL and its last error masked. */
export interface RpcUrlState {
  url: string;
  status: RpcUrlStatus;
  lastError?: string;
  /** JSON-RPC calls sent to it (each call of a batch, probes included). */
  calls: number;
}

/** What became of one request to one URL, for `rpc_requests_total{chain,url,outcome}`. */
export type RpcRequestOutcome = "ok" | "timeout" | "http_error" | "connection_error" | "internal_error" | "behind";

export interface RpcUrlObserver {
  /** `calls` JSON-RPC calls went to `url` (masked) and came to `outcome`. */
  rpcRequest(chain: string, url: string, outcome: RpcRequestOutcome, calls: number): void;
}

export interface FailoverOptions {
  /** Bound on one round trip to one URL (RPC_TIMEOUT_MS). */
  timeoutMs: number;
  /** A URL whose head is more than this below the highest head seen is `behind` (RPC_MAX_LAG_BLOCKS). */
  maxLagBlocks: number;
  /** The chain's label in metrics (its id). */
  chain?: string;
  observer?: RpcUrlObserver;
  /** First cooldown of a failed URL; it doubles at each failure in a row up to `maxCooldownMs`. */
  cooldownMs?: number;
  maxCooldownMs?: number;
  /** How often a `behind` URL's head is asked again. */
  behindRecheckMs?: number;
}

const DEFAULT_COOLDOWN_MS = 1_000;
const DEFAULT_MAX_COOLDOWN_MS = 60_000;
const DEFAULT_BEHIND_RECHECK_MS = 1_000;
/** The pause before a start asks again URLs that failed eth_chainId: it doubles up to the max. */
const START_RETRY_MS = 500;
const MAX_START_RETRY_MS = 4_000;
/** A head older than this says nothing about how far a URL lags now. */
const HEAD_FRESH_MS = 10_000;
const SEND_RAW = "eth_sendRawTransaction";
/** "Already known" and its variants: the node has the transaction, which is an acceptance. */
const KNOWN = /already known|known transaction|already imported|already in (the )?(mempool|pool)/i;

interface JsonRpcCall {
  id?: unknown;
  method?: unknown;
  params?: unknown;
}
interface JsonRpcAnswer {
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown };
}

/** One URL's JSON-RPC carrier: HTTP(S), or a WebSocket for a ws(s):// URL. */
interface UrlTransport {
  send(body: unknown): Promise<unknown>;
  close(): void;
}

class Endpoint {
  readonly scrub: (text: string) => string;
  status: RpcUrlStatus = "ok";
  lastError?: string;
  calls = 0;
  /** Failures in a row: the cooldown is 1 s × 2^(failures - 1), capped. */
  failures = 0;
  downUntil = 0;
  head?: { number: number; at: number };
  timer?: NodeJS.Timeout;
  /** It failed eth_chainId at start: nothing is read from it or sent to it until it answers the chain's id. */
  unverified = false;

  constructor(
    readonly http: UrlTransport,
    url: string,
  ) {
    this.masked = maskUrl(url);
    this.scrub = credentialScrubber(credentialFragments(url));
  }

  readonly masked: string;
}

/**
 * A chain's RPC URLs as one JSON-RPC transport (API.md "RPC failover"). Reads go to the first URL,
 * in the order given, that is `ok`; one that fails (connection error, timeout, HTTP error or 429, a
 * JSON-RPC internal error) is left out for a cooldown (1 s doubling to 60 s), probed in the
 * background, and the read goes to the next at once. A read never waits on a URL known to be
 * down, unless no other URL answers: then the URLs left out (in a cooldown, or behind and asked
 * their head first) are tried at once, the one due back soonest first, before the read fails. One URL is read at a time, in a fixed order, so that consecutive reads see
 * one node's view and a lagging spare never answers while the first URL answers.
 *
 * A URL whose head (from the eth_blockNumber answers it gives) is more than `maxLagBlocks` below
 * the highest head seen is `behind`: its answer is not used, the read goes to the next URL, and it
 * is asked its head again until it has caught up. A block one URL lacks at a height another URL
 * has shown is asked of the next one: a lagging node alone never looks like a reorg.
 *
 * A signed transaction goes to every URL that is not down, at once; the first acceptance answers,
 * and "already known" counts as one. A refusal is answered only when every URL answered (a "nonce
 * too low" from one URL while another's answer is lost proves nothing: it may be ours, mined); a
 * call no URL accepted and some URL did not answer is left out of a batch's answer, which
 * broadcast() reads as lost, for the follower to settle. Nothing here signs or re-sends.
 */
export class FailoverTransport {
  private readonly endpoints: Endpoint[];
  private readonly cooldownMs: number;
  private readonly maxCooldownMs: number;
  private readonly behindRecheckMs: number;
  /** The highest head seen on the chain, from any URL: a URL whose own head fell back is judged by it too. */
  private chainHead?: { number: number; at: number };
  private closed = false;
  private chain: string;
  /** The chain id every URL must answer, once known. */
  private chainId?: bigint;
  /** Held: every call fails as the chain not answering (see hold()). */
  private held = false;

  constructor(
    urls: readonly string[],
    private readonly options: FailoverOptions,
  ) {
    if (urls.length === 0) throw new Error("no RPC URL given");
    const several = urls.length > 1;
    // One URL: a 429 is retried there within the time bound, as before; several: the next URL is asked at once.
    this.endpoints = urls.map(
      (url) =>
        new Endpoint(
          isWebSocketUrl(url)
            ? new WsJsonRpcTransport(url, options.timeoutMs)
            : new HttpJsonRpcTransport(url, options.timeoutMs, { retryThrottled: !several }),
          url,
        ),
    );
    this.cooldownMs = options.cooldownMs ?? DEFAULT_COOLDOWN_MS;
    this.maxCooldownMs = options.maxCooldownMs ?? DEFAULT_MAX_COOLDOWN_MS;
    this.behindRecheckMs = options.behindRecheckMs ?? DEFAULT_BEHIND_RECHECK_MS;
    this.chain = options.chain ?? "";
  }

  /** Names the chain in metrics, once its id is known. */
  label(chain: string): void {
    this.chain = chain;
  }

  /** Each URL's state, in the order given. */
  states(): RpcUrlState[] {
    return this.endpoints.map((e) => ({
      url: e.masked,
      status: e.status,
      ...(e.lastError ? { lastError: e.lastError } : {}),
      calls: e.calls,
    }));
  }

  /** Whether some URL is not down (a chain with none is down). */
  get available(): boolean {
    return this.endpoints.some((e) => e.status !== "down");
  }

  /**
   * Asks every URL `eth_chainId` at once. Answers the chain id of the URLs that answered; a URL that
   * answers another id than `expected` (or than the first URL that answered) throws, naming it
   * masked; one that does not answer is marked down, and answers the id later (its probes ask it)
   * before anything is read from it. With `expected` set, no answer at all is no failure: `expected`
   * is answered and the chain is down until a URL answers. Without it, URLs that fail with a
   * transient error (a 5xx or 429, a reset, a refused connection, a timeout) are asked again with a
   * backoff for up to `waitMs`; then, or at another failure, the first URL's error is thrown.
   */
  async checkChainId(expected?: bigint, waitMs = 0): Promise<bigint> {
    this.chainId = expected;
    const deadline = Date.now() + waitMs;
    for (let pause = START_RETRY_MS, all = true; ; pause = Math.min(pause * 2, MAX_START_RETRY_MS), all = false) {
      const errors = await this.askChainIds(all);
      if (this.chainId !== undefined && (expected !== undefined || this.answered)) return this.chainId;
      const i = errors.findIndex((err) => err !== undefined);
      if (!errors.every(isTransient) || Date.now() + pause > deadline) {
        if (waitMs > 0 && errors.every(isTransient))
          throw new Error(
            `No RPC URL of the chain (${this.endpoints.map((e) => e.masked).join(", ")}) answered eth_chainId ` +
              `within ${waitMs} ms (CHAIN_START_TIMEOUT_MS); the last error: ${describe(errors[i], this.endpoints[i])}`,
          );
        throw errors[i];
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /**
   * Asks each URL (`all`) or each that has not answered it yet its chain id, at once: each answers
   * it (or throws, naming it, when it is another id) or is marked down and unverified. The errors of
   * those that failed, by URL.
   */
  private async askChainIds(all: boolean): Promise<unknown[]> {
    const answers = await Promise.all(
      this.endpoints.map(async (e) => (all || e.unverified ? this.askChainId(e) : { id: this.chainId! })),
    );
    answers.forEach((answer, i) => {
      if (!("id" in answer)) return void (this.endpoints[i].unverified = true);
      this.chainId ??= answer.id;
      const e = this.endpoints[i];
      if (answer.id !== this.chainId) throw this.otherChain(e, answer.id);
      e.unverified = false;
      if (e.status === "down") {
        // Asked again (a start's retry, a chain joining), it answers: it takes its place back.
        e.status = "ok";
        e.failures = 0;
        clearTimeout(e.timer);
      }
    });
    return answers.map((answer) => ("err" in answer ? answer.err : undefined));
  }

  private async askChainId(e: Endpoint): Promise<{ id: bigint } | { err: unknown }> {
    try {
      const answer = (await this.post(e, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] })) as {
        result?: unknown;
      };
      if (typeof answer?.result !== "string")
        throw new Error("The JSON-RPC endpoint answered eth_chainId without a result");
      return { id: BigInt(answer.result) };
    } catch (err) {
      this.fail(e, err);
      return { err };
    }
  }

  private otherChain(e: Endpoint, id: bigint): Error {
    return new Error(
      `The RPC URL ${e.masked} answers chain id ${id}, not ${this.chainId}: every URL of a chain must serve that chain`,
    );
  }

  /** Whether some URL has answered the chain id. */
  get answered(): boolean {
    return this.endpoints.some((e) => !e.unverified);
  }

  /** Asks the URLs that have not answered the chain id yet (a chain down at start); whether one has now. */
  async reach(): Promise<boolean> {
    if (!this.answered) await this.askChainIds(false);
    return this.answered;
  }

  /**
   * Holds the traffic: every call fails at once as the chain not answering, until release(). A chain
   * that joins after the start is held until the store is bound to it (its blocks checked against
   * those the store has seen); `sendHeld` is that check's way through.
   */
  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
  }

  /** send(), through a hold. */
  sendHeld(body: unknown): Promise<unknown> {
    return this.sendNow(body);
  }

  /** Posts `body` (one JSON-RPC call or a batch) and answers the parsed JSON answer, as HttpJsonRpcTransport does. */
  async send(body: unknown): Promise<unknown> {
    if (this.held) throw makeError("the chain has not answered since the start", "SERVER_ERROR");
    return this.sendNow(body);
  }

  private async sendNow(body: unknown): Promise<unknown> {
    if (this.closed) throw makeError("the RPC transport is closed", "UNSUPPORTED_OPERATION", { operation: "send" });
    const calls = (Array.isArray(body) ? body : [body]) as JsonRpcCall[];
    const sends = calls.filter((c) => c?.method === SEND_RAW);
    if (sends.length === 0) return this.read(body);
    if (sends.length === calls.length) return this.broadcast(body, calls);
    // A batch that mixes both: reads through the read path, transactions to every URL.
    const others = calls.filter((c) => c?.method !== SEND_RAW);
    const [read, sent] = await Promise.all([
      this.read(others.length === 1 ? others[0] : others),
      this.broadcast(sends.length === 1 ? sends[0] : sends, sends),
    ]);
    return [...asArray(read), ...asArray(sent)];
  }

  /** Stops the probes and closes every URL's connections. */
  close(): void {
    this.closed = true;
    for (const e of this.endpoints) {
      clearTimeout(e.timer);
      e.http.close();
    }
  }

  private async read(body: unknown): Promise<unknown> {
    const candidates = this.readOrder();
    const first = await this.readFrom(candidates, body);
    if ("answer" in first) return first.answer;
    // No URL asked answered: those left out (in a cooldown, or behind) are asked at once, before the
    // read fails (a write with it): one back, or caught up, answers. A URL behind is asked its head
    // first, and read from only if it has caught up; one that never answered the chain id, that id.
    const rest = this.endpoints.filter((e) => !candidates.includes(e));
    await Promise.all(rest.filter((e) => e.status === "behind" || e.unverified).map((e) => this.probe(e)));
    const again = rest.filter((e) => e.status !== "behind" && !e.unverified);
    const second = again.length > 0 ? await this.readFrom(again, body) : first;
    if ("answer" in second) return second.answer;
    const lastAnswer = second.lastAnswer ?? first.lastAnswer;
    if (lastAnswer !== undefined) return lastAnswer;
    throw second.lastError ?? first.lastError ?? makeError("no RPC URL to ask", "SERVER_ERROR");
  }

  /** A read asked of `candidates` in order: the first usable answer, else the last answer or error met. */
  private async readFrom(
    candidates: Endpoint[],
    body: unknown,
  ): Promise<{ answer: unknown } | { lastAnswer?: unknown; lastError?: unknown }> {
    const calls = (Array.isArray(body) ? body : [body]) as JsonRpcCall[];
    let lastError: unknown;
    let lastAnswer: unknown;
    for (let i = 0; i < candidates.length; i++) {
      const e = candidates[i];
      const more = i < candidates.length - 1;
      let answer: unknown;
      try {
        answer = await this.post(e, body);
      } catch (err) {
        this.fail(e, err);
        lastError = err;
        continue;
      }
      const answers = asArray(answer) as JsonRpcAnswer[];
      const internal = answers.find((a) => isInternalError(a));
      if (internal) {
        this.fail(e, makeError(`JSON-RPC internal error: ${String(internal.error?.message ?? "")}`, "SERVER_ERROR"));
        lastAnswer = answer;
        continue;
      }
      this.heard(e, calls, answers);
      if (e.status === "behind") {
        // Its answer is not used: a lagging node's view would look like a reorg.
        this.count(e, "behind", calls.length);
        lastError = makeError("every RPC URL that answers is behind", "SERVER_ERROR");
        continue;
      }
      if (more && this.lacksShownBlock(calls, answers)) {
        lastAnswer = answer;
        continue;
      }
      if (e.status === "down") {
        // Asked as the last resort, and it answered: it takes its place back.
        e.status = "ok";
        clearTimeout(e.timer);
      }
      e.failures = 0;
      return { answer };
    }
    return { lastAnswer, lastError };
  }

  /**
   * The URLs a read tries, in order: those `ok`; when none is, those down, the one due back soonest
   * first: the chain may answer there still, and there is nothing else to ask.
   */
  private readOrder(): Endpoint[] {
    const ok = this.endpoints.filter((e) => e.status === "ok" && !e.unverified);
    if (ok.length > 0) return ok;
    return this.endpoints.filter((e) => e.status === "down" && !e.unverified).sort((a, b) => a.downUntil - b.downUntil);
  }

  /** Transactions to every URL not down at once (every URL if all are); see the class comment. */
  private async broadcast(body: unknown, calls: JsonRpcCall[]): Promise<unknown> {
    const verified = this.endpoints.filter((e) => !e.unverified);
    if (verified.length === 0) throw makeError("no RPC URL has answered the chain id yet", "SERVER_ERROR");
    let targets = verified.filter((e) => e.status !== "down");
    if (targets.length === 0) targets = verified;
    const ids = calls.map((c) => JSON.stringify(c.id ?? null));
    const batch = Array.isArray(body);
    return new Promise((resolve, reject) => {
      const accepted = new Map<string, JsonRpcAnswer>();
      const refused: Array<Map<string, JsonRpcAnswer> | undefined> = targets.map(() => undefined);
      const failures: unknown[] = [];
      let settled = 0;
      let done = false;
      const finish = () => {
        if (done) return;
        const all = settled === targets.length;
        if (!all && accepted.size < ids.length) return;
        done = true;
        const answers: JsonRpcAnswer[] = [];
        for (const id of ids) {
          const answer =
            accepted.get(id) ??
            // A refusal stands only if every URL answered this call: else the call is left out (lost).
            (refused.every((m) => m?.has(id)) ? refused.find((m) => m?.has(id))?.get(id) : undefined);
          if (answer) answers.push(answer);
        }
        if (answers.length === 0 && failures.length === targets.length) {
          // No URL answered at all: refused connections everywhere prove nothing was sent.
          const unreachable = failures.every((f) => (f as { code?: string }).code === "ECONNREFUSED");
          return reject(unreachable ? failures[0] : (failures.find((f) => !isRefused(f)) ?? failures[0]));
        }
        if (!batch && answers.length === 0)
          return reject(makeError("no URL accepted the transaction and some did not answer", "TIMEOUT"));
        resolve(batch ? answers : answers[0]);
      };
      targets.forEach((e, t) => {
        this.post(e, body).then(
          (answer) => {
            const map = new Map<string, JsonRpcAnswer>();
            for (const a of asArray(answer) as JsonRpcAnswer[]) {
              const id = JSON.stringify(a?.id ?? null);
              // "Already known" is an acceptance: broadcast() reads it so.
              if (a && ("result" in a || KNOWN.test(String(a.error?.message ?? "")))) {
                if (!accepted.has(id)) accepted.set(id, a);
              } else if (a) map.set(id, a);
            }
            // A call left out of its answer is lost there: its refusal map lacks it.
            refused[t] = map;
            e.failures = 0;
            settled++;
            finish();
          },
          (err: unknown) => {
            this.fail(e, err);
            failures.push(err);
            settled++;
            finish();
          },
        );
      });
    });
  }

  /** One POST to `e`, counted; a transport failure throws. */
  private async post(e: Endpoint, body: unknown): Promise<unknown> {
    const n = Array.isArray(body) ? body.length : 1;
    e.calls += n;
    try {
      const answer = await e.http.send(body);
      this.count(e, "ok", n);
      return answer;
    } catch (err) {
      this.count(e, outcomeOf(err), n);
      throw err;
    }
  }

  private count(e: Endpoint, outcome: RpcRequestOutcome, n: number): void {
    if (n > 0) this.options.observer?.rpcRequest(this.chain, e.masked, outcome, n);
  }

  /** `e` failed: down for its cooldown (doubling), with a probe when it ends. */
  private fail(e: Endpoint, err: unknown): void {
    e.lastError = describe(err, e);
    if (e.status === "down" && Date.now() < e.downUntil) return; // reads in flight when it went down
    e.failures++;
    const cooldown = Math.min(this.cooldownMs * 2 ** (e.failures - 1), this.maxCooldownMs);
    e.status = "down";
    e.downUntil = Date.now() + cooldown;
    this.schedule(e, cooldown);
  }

  private schedule(e: Endpoint, ms: number): void {
    if (this.closed) return;
    clearTimeout(e.timer);
    e.timer = setTimeout(() => void this.probe(e), ms);
    e.timer.unref();
  }

  /** Asks a down or behind URL its head: it takes its place back once it answers (and has caught up). */
  private async probe(e: Endpoint): Promise<void> {
    if (this.closed) return;
    if (e.unverified) return this.probeChainId(e);
    const call = { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] };
    let answer: JsonRpcAnswer;
    try {
      answer = (await this.post(e, call)) as JsonRpcAnswer;
      if (typeof answer?.result !== "string") throw makeError("no head in the answer", "SERVER_ERROR");
    } catch (err) {
      if (e.status === "down") e.downUntil = 0; // a failure past the cooldown: the next one doubles
      this.fail(e, err);
      return;
    }
    if (e.status === "down") e.status = "ok";
    this.heard(e, [call], [answer]);
    if (e.status === "behind") this.schedule(e, this.behindRecheckMs);
  }

  /** Asks a URL that has not answered the chain id yet: it takes its place once it answers the chain's. */
  private async probeChainId(e: Endpoint): Promise<void> {
    const answer = await this.askChainId(e); // a failure is marked there
    if (!("id" in answer)) return;
    if (this.chainId !== undefined && answer.id !== this.chainId) return this.fail(e, this.otherChain(e, answer.id));
    this.chainId ??= answer.id;
    e.unverified = false;
    e.status = "ok";
    e.failures = 0;
    clearTimeout(e.timer);
  }

  /** Takes the heads in `e`'s answers: it is `behind`, or back to `ok`, by the highest fresh head of any URL. */
  private heard(e: Endpoint, calls: JsonRpcCall[], answers: JsonRpcAnswer[]): void {
    if (this.endpoints.length === 1) return;
    const byId = new Map(answers.map((a) => [JSON.stringify(a?.id ?? null), a]));
    for (const call of calls) {
      const head = headIn(call, byId.get(JSON.stringify(call?.id ?? null))?.result);
      if (head !== undefined) e.head = { number: head, at: Date.now() };
    }
    if (!e.head || e.status === "down") return;
    if (!this.chainHead || e.head.number >= this.chainHead.number) this.chainHead = { ...e.head };
    const lagging = e.head.number < this.highestHead() - this.options.maxLagBlocks;
    if (lagging && e.status === "ok") {
      e.status = "behind";
      e.lastError = `head ${e.head.number} more than ${this.options.maxLagBlocks} blocks below ${this.highestHead()}`;
      this.schedule(e, this.behindRecheckMs);
    } else if (!lagging && e.status === "behind") {
      e.status = "ok";
      clearTimeout(e.timer);
    }
  }

  private highestHead(): number {
    const since = Date.now() - HEAD_FRESH_MS;
    let highest = -1;
    for (const e of this.endpoints) if (e.head && e.head.at >= since) highest = Math.max(highest, e.head.number);
    if (this.chainHead && this.chainHead.at >= since) highest = Math.max(highest, this.chainHead.number);
    return highest;
  }

  /**
   * Whether `e` answered "no such block" for a height the chain has shown (the highest fresh head
   * seen, from any URL, is at or above it): a lagging node's gap, which the next URL is asked about.
   */
  private lacksShownBlock(calls: JsonRpcCall[], answers: JsonRpcAnswer[]): boolean {
    const byId = new Map(answers.map((a) => [JSON.stringify(a?.id ?? null), a]));
    for (const call of calls) {
      if (call?.method !== "eth_getBlockByNumber" || !Array.isArray(call.params)) continue;
      const tag = call.params[0];
      if (typeof tag !== "string" || !tag.startsWith("0x")) continue;
      const answer = byId.get(JSON.stringify(call.id ?? null));
      if (!answer || !("result" in answer) || answer.result !== null) continue;
      if (this.highestHead() >= Number(BigInt(tag))) return true;
    }
    return false;
  }
}

function asArray(answer: unknown): unknown[] {
  return Array.isArray(answer) ? answer : [answer];
}

/** A JSON-RPC "internal error" (-32603) that is the node failing, not the call's own outcome (a revert). */
function isInternalError(answer: JsonRpcAnswer): boolean {
  return isBareInternalError(answer?.error);
}

function outcomeOf(err: unknown): RpcRequestOutcome {
  const code = (err as { code?: string })?.code;
  if (code === "TIMEOUT") return "timeout";
  if (code === "SERVER_ERROR") return "http_error";
  return "connection_error";
}

/** A failure worth asking again at start: a 5xx or 429, a reset, a refused connection, a timeout. */
function isTransient(err: unknown): boolean {
  if (err === undefined) return true;
  const { code, message } = err as { code?: string; message?: string };
  if (code === "SERVER_ERROR") return /^server response (5\d\d|429)\b|not valid JSON/.test(String(message ?? ""));
  return code !== undefined && TRANSIENT_CODES.has(code);
}

const TRANSIENT_CODES = new Set([
  "TIMEOUT",
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

function isRefused(err: unknown): boolean {
  return (err as { code?: string })?.code === "ECONNREFUSED";
}

/** An error's code and first words, the URL's secrets scrubbed (a node's error body may quote its URL). */
function describe(err: unknown, e: Endpoint): string {
  const { code, message } = (err ?? {}) as { code?: string; message?: string };
  return e.scrub(`${code ?? "error"}: ${String(message ?? "").slice(0, 160)}`);
}

/** The head an answer tells: eth_blockNumber's, or the number of the block eth_getBlockByNumber("latest") read. */
function headIn(call: JsonRpcCall, result: unknown): number | undefined {
  if (call?.method === "eth_blockNumber") return typeof result === "string" ? Number(BigInt(result)) : undefined;
  if (call?.method !== "eth_getBlockByNumber" || !Array.isArray(call.params) || call.params[0] !== "latest") return;
  const number = (result as { number?: unknown } | null)?.number;
  return typeof number === "string" ? Number(BigInt(number)) : undefined;
}

/** Whether `url` is a ws:// or wss:// URL: JSON-RPC over a WebSocket, and a head subscription. */
export function isWebSocketUrl(url: string): boolean {
  return /^wss?:\/\//i.test(url);
}
