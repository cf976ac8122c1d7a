import http from "node:http";
import https from "node:https";
import { ForbiddenAddress, type UrlGuard } from "./url-guard";

/** What one POST to an endpoint came to. */
export type AttemptResult =
  { kind: "answered"; status: number; ms: number } | { kind: "error"; error: string; forbidden: boolean; ms: number };

/** How long a receiver has to answer, headers included (API.md: a 2xx within 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Sockets kept open per endpoint origin, so a busy endpoint is not reconnected for every event. */
const SOCKETS_PER_ORIGIN = 32;

/**
 * POSTs deliveries through keep-alive agents whose DNS lookup is the SSRF guard's: every address
 * a name resolves to is checked at connect time. IP-literal hosts (never looked up) are checked
 * before the request. Redirects are never followed: a 3xx is an answer like any non-2xx.
 */
export class DeliverySender {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  private readonly inFlight = new Set<http.ClientRequest>();

  constructor(
    private readonly guard: UrlGuard,
    private readonly timeoutMs = DELIVERY_TIMEOUT_MS,
  ) {
    const common = { keepAlive: true, maxSockets: SOCKETS_PER_ORIGIN, lookup: guard.lookup };
    this.httpAgent = new http.Agent(common);
    this.httpsAgent = new https.Agent(common);
  }

  post(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    return new Promise((resolve) => {
      let target: URL;
      try {
        target = new URL(url);
        this.guard.checkLiteral(target);
      } catch (err) {
        resolve({ kind: "error", error: describe(err), forbidden: err instanceof ForbiddenAddress, ms: ms() });
        return;
      }
      const secure = target.protocol === "https:";
      let settled = false;
      const settle = (result: AttemptResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.inFlight.delete(request);
        resolve(result);
      };
      const request = (secure ? https : http).request(target, {
        method: "POST",
        agent: secure ? this.httpsAgent : this.httpAgent,
        headers: { ...headers, "content-length": Buffer.byteLength(body).toString() },
      });
      this.inFlight.add(request);
      const timer = setTimeout(() => {
        settle({ kind: "error", error: `no answer within ${this.timeoutMs} ms`, forbidden: false, ms: ms() });
        request.destroy();
      }, this.timeoutMs);
      request.on("response", (response) => {
        // The body is not read for anything: drained so the socket can serve the next delivery.
        response.resume();
        response.on("error", () => {});
        settle({ kind: "answered", status: response.statusCode ?? 0, ms: ms() });
      });
      request.on("error", (err) => {
        settle({ kind: "error", error: describe(err), forbidden: err instanceof ForbiddenAddress, ms: ms() });
      });
      request.end(body);
    });
  }

  /** Cuts every request in flight (shutdown) and closes idle sockets. */
  close(): void {
    for (const request of this.inFlight) request.destroy(new Error("the service is stopping"));
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

/** An error's message for the delivery log: the kind of failure, never a URL's credentials. */
function describe(err: unknown): string {
  if (err instanceof ForbiddenAddress) return `forbidden address: ${err.message}`;
  const e = err as NodeJS.ErrnoException;
  return (e.code ? `${e.code}: ` : "") + String(e.message ?? err).slice(0, 200);
}
