import { Pool, type Dispatcher } from "undici";
import { signatureHeader } from "./signing";
import { ForbiddenAddress, type UrlGuard } from "./url-guard";

/** What one POST to an endpoint came to. */
export type AttemptResult =
  { kind: "answered"; status: number; ms: number } | { kind: "error"; error: string; forbidden: boolean; ms: number };

/** How long a receiver has to answer, headers included (API.md: a 2xx within 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Sockets kept open per endpoint, so a busy endpoint is not reconnected for every event. */
const SOCKETS_PER_ENDPOINT = 32;
/** An endpoint's sockets are closed once it has sent nothing for this long. */
const IDLE_POOL_MS = 5 * 60_000;

/**
 * Signs and POSTs deliveries through undici, whose DNS lookup is the SSRF guard's: every address a
 * name resolves to is checked before a connection is made. IP-literal hosts (never looked up) are
 * checked before the request. Redirects are never followed: a 3xx is an answer like any non-2xx.
 * Each endpoint has sockets of its own, not one pool per origin: endpoints on one host (a hosted
 * receiver service, say) never wait for each other's sockets, nor time out in that wait.
 *
 * On the event loop of the worker that claims them, not a thread of its own: with one, the process
 * took 0.30 to 0.36 ms of CPU per POST against 0.17 here (bench:webhooks:post), the hop there and
 * back waking each side for every batch, and the cost to writes was no better for it.
 */
export class DeliverySender {
  /** Kept-alive connections per endpoint (and origin: a changed URL gets new ones), and when each was last used. */
  private readonly pools = new Map<string, { pool: Pool; usedAt: number }>();
  private readonly sweeper: NodeJS.Timeout;
  /** The requests in flight (cut on close), each until its answer ends. */
  private readonly inFlight = new Set<Dispatcher.DispatchController>();
  private closed = false;
  /** URLs parsed, whose IP-literal check passed. */
  private readonly checked = new Map<string, URL>();

  constructor(
    private readonly guard: UrlGuard,
    private readonly timeoutMs = DELIVERY_TIMEOUT_MS,
  ) {
    this.sweeper = setInterval(() => this.closeIdle(), IDLE_POOL_MS / 5).unref();
  }

  /**
   * POSTs `body` to `url` for `endpoint` (whose sockets it uses), signed for `eventId` with each of
   * `secrets` and the attempt's own timestamp.
   */
  post(endpoint: string, url: string, eventId: string, secrets: string[], body: string): Promise<AttemptResult> {
    let target = this.checked.get(url);
    try {
      if (!target) {
        target = new URL(url);
        this.guard.checkLiteral(target);
        // The guard's answer for a URL never changes: an endpoint's URL is parsed and checked once.
        if (this.checked.size >= 1_000) this.checked.clear();
        this.checked.set(url, target);
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
    const parsed = target;
    const pool = this.poolOf(endpoint, parsed.origin);
    return new Promise((resolve) => this.dispatch(pool, parsed, eventId, secrets, body, resolve));
  }

  /** Cuts every request in flight (shutdown): each answers an error. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    for (const request of this.inFlight) request.abort(new Error("the service is stopping"));
    for (const { pool } of this.pools.values()) void pool.destroy().catch(() => {});
    this.pools.clear();
  }

  private poolOf(endpoint: string, origin: string): Pool {
    const key = `${endpoint} ${origin}`;
    let entry = this.pools.get(key);
    if (!entry) {
      // undici rather than node:http: a third of the CPU per POST.
      const pool = new Pool(origin, {
        connections: SOCKETS_PER_ENDPOINT,
        connect: { lookup: this.guard.lookup },
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      entry = { pool, usedAt: 0 };
      this.pools.set(key, entry);
    }
    entry.usedAt = Date.now();
    return entry.pool;
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

  private dispatch(
    pool: Pool,
    target: URL,
    eventId: string,
    secrets: string[],
    body: string,
    resolve: (result: AttemptResult) => void,
  ): void {
    const { inFlight, timeoutMs } = this;
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    const timestamp = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "nft-ops-webhooks/0.1",
      "webhook-id": eventId,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signatureHeader(secrets, eventId, timestamp, body),
    };
    // Credentials in the URL, as node:http sent them.
    if (target.username)
      headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString("base64")}`;
    let request: Dispatcher.DispatchController | undefined;
    let settled = false;
    const settle = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const timer = setTimeout(() => {
      settle({ kind: "error", error: `no answer within ${timeoutMs} ms`, forbidden: false, ms: ms() });
      request?.abort(new Error("timed out"));
    }, timeoutMs);
    // dispatch() with a handler rather than request(): no response stream, promise or
    // AbortController per POST (0.17 against 0.19 to 0.21 ms of the process's CPU per POST, both
    // on one event loop, bench:webhooks:post). A delivery is its answer's status, settled when the
    // headers come; the body is read and dropped, so the connection serves the next.
    pool.dispatch(
      { path: `${target.pathname}${target.search}`, method: "POST", headers, body },
      {
        onRequestStart(controller) {
          if (settled) return controller.abort(new Error("timed out"));
          if (request) inFlight.delete(request);
          request = controller;
          inFlight.add(controller);
        },
        onResponseStart(_controller, statusCode) {
          // 1xx (informational) is not the answer.
          if (statusCode >= 200) settle({ kind: "answered", status: statusCode, ms: ms() });
        },
        onResponseData() {},
        onResponseEnd(controller) {
          inFlight.delete(controller);
        },
        onResponseError(controller, err: Error) {
          inFlight.delete(controller);
          settle({ kind: "error", error: describe(err), forbidden: err instanceof ForbiddenAddress, ms: ms() });
        },
      },
    );
  }
}

/** An error's message for the delivery log: the kind of failure, never a URL's credentials. */
function describe(err: unknown): string {
  if (err instanceof ForbiddenAddress) return `forbidden address: ${err.message}`;
  const e = err as NodeJS.ErrnoException;
  return (e.code ? `${e.code}: ` : "") + String(e.message ?? err).slice(0, 200);
}
