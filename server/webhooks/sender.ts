import { Pool } from "undici";
import { signatureHeader } from "./signing";
import { ForbiddenAddress, type UrlGuard } from "./url-guard";

/** What one POST to an endpoint came to. */
export type AttemptResult =
  { kind: "answered"; status: number; ms: number } | { kind: "error"; error: string; ms: number };

/** How long a receiver has to answer, headers included (API.md: a 2xx within 10 s). */
const DELIVERY_TIMEOUT_MS = 10_000;
/** Sockets kept open per endpoint, so a busy endpoint is not reconnected for every event. */
const SOCKETS_PER_ENDPOINT = 32;
/** An endpoint's sockets are closed once it has sent nothing for this long. */
const IDLE_POOL_MS = 5 * 60_000;

/**
 * Signs and POSTs deliveries through undici, whose DNS lookup is the SSRF guard's: every address a
 * name resolves to is checked before a connection is made. IP-literal hosts (never looked up) are
 * checked before the request. Redirects are never followed: a 3xx is an answer like any non-2xx.
 * Each endpoint has sockets of its own, not one pool per origin: endpoints on one host never wait
 * for each other's sockets, nor time out in that wait.
 */
export class DeliverySender {
  /** Kept-alive connections per endpoint and origin (a changed URL gets new ones), and when each was last used. */
  private readonly pools = new Map<string, { pool: Pool; usedAt: number }>();
  private readonly sweeper = setInterval(() => this.closeIdle(), IDLE_POOL_MS / 5).unref();
  /** Aborted on close: cuts every request in flight. */
  private readonly closing = new AbortController();

  constructor(
    private readonly guard: UrlGuard,
    private readonly timeoutMs = DELIVERY_TIMEOUT_MS,
  ) {}

  /** POSTs `body` to `url` for `endpoint`, signed for `eventId` with each of `secrets` and the attempt's own timestamp. */
  async post(endpoint: string, url: string, eventId: string, secrets: string[], body: string): Promise<AttemptResult> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    const target = new URL(url);
    const timestamp = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "nft-ops-webhooks/0.1",
      "webhook-id": eventId,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signatureHeader(secrets, eventId, timestamp, body),
    };
    // Credentials in the URL, as node:http sent them.
    if (target.username) {
      const credentials = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
      headers.authorization = `Basic ${Buffer.from(credentials).toString("base64")}`;
    }
    try {
      this.guard.checkLiteral(target);
      if (this.closing.signal.aborted) throw new Error("the service is stopping");
      const signal = AbortSignal.any([this.closing.signal, AbortSignal.timeout(this.timeoutMs)]);
      const answer = await this.poolOf(endpoint, target.origin).request({
        path: `${target.pathname}${target.search}`,
        method: "POST",
        headers,
        body,
        signal,
      });
      // A delivery is its answer's status; the body is read and dropped, so the socket serves the next.
      answer.body.dump().catch(() => undefined);
      return { kind: "answered", status: answer.statusCode, ms: ms() };
    } catch (err) {
      const timedOut = (err as Error).name === "TimeoutError";
      return { kind: "error", error: timedOut ? `no answer within ${this.timeoutMs} ms` : describe(err), ms: ms() };
    }
  }

  /** Cuts every request in flight (shutdown): each answers an error. */
  close(): void {
    if (this.closing.signal.aborted) return;
    this.closing.abort(new Error("the service is stopping"));
    clearInterval(this.sweeper);
    for (const { pool } of this.pools.values()) void pool.destroy().catch(() => {});
    this.pools.clear();
  }

  private poolOf(endpoint: string, origin: string): Pool {
    const key = `${endpoint} ${origin}`;
    const pool =
      this.pools.get(key)?.pool ??
      new Pool(origin, { connections: SOCKETS_PER_ENDPOINT, connect: { lookup: this.guard.lookup } });
    this.pools.set(key, { pool, usedAt: Date.now() });
    return pool;
  }

  /** Closes the sockets of endpoints that sent nothing for IDLE_POOL_MS (deleted, disabled, quiet). */
  private closeIdle(): void {
    const before = Date.now() - IDLE_POOL_MS;
    for (const [key, entry] of this.pools) {
      if (entry.usedAt >= before) continue;
      this.pools.delete(key);
      void entry.pool.close().catch(() => {});
    }
  }
}

/** An error's message for the delivery log: the kind of failure, never a URL's credentials. */
function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const forbidden = [e, e.cause].find((x) => x instanceof ForbiddenAddress);
  if (forbidden) return `forbidden address: ${forbidden.message}`;
  return (e.code ? `${e.code}: ` : "") + String(e.message ?? err).slice(0, 200);
}
