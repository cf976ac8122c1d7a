import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Logger } from "../http/logger";

/**
 * An HTTP server that can stop gracefully: it counts the requests in flight so that closing it
 * stops accepting connections, lets those requests finish, and cuts connections only once a
 * bound has passed. Attach it before the server serves its first request.
 */
export class DrainableServer {
  private inFlight = 0;
  private closing = false;
  private drained?: () => void;

  constructor(readonly server: Server) {
    // First of the "request" listeners, so that the count includes every request the app sees.
    server.prependListener("request", (_req: IncomingMessage, res: ServerResponse) => this.track(res));
  }

  /** Requests received and not yet answered (or abandoned by their client). */
  get requestsInFlight(): number {
    return this.inFlight;
  }

  private track(res: ServerResponse): void {
    this.inFlight++;
    // A request that arrives on a kept-alive connection while closing is served, then its connection closed.
    if (this.closing && !res.headersSent) res.setHeader("Connection", "close");
    res.once("close", () => {
      this.inFlight--;
      if (!this.closing) return;
      this.server.closeIdleConnections();
      if (this.inFlight === 0) this.drained?.();
    });
  }

  /**
   * Stops accepting connections, closes idle ones, and waits for the requests in flight to be
   * answered; after `timeoutMs` the remaining connections are cut. Resolves once the server is
   * closed, telling how many requests were cut.
   */
  async close(timeoutMs: number): Promise<{ cut: number }> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    let cut = 0;
    if (this.inFlight > 0) {
      const drained = new Promise<void>((resolve) => (this.drained = resolve));
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<"expired">((resolve) => (timer = setTimeout(() => resolve("expired"), timeoutMs)));
      if ((await Promise.race([drained, expired])) === "expired") {
        cut = this.inFlight;
        this.server.closeAllConnections();
      }
      clearTimeout(timer);
    }
    await closed;
    return { cut };
  }
}

export type ShutdownHook = () => Promise<void> | void;

/**
 * Work to stop when the service shuts down, after the HTTP servers have drained and before the
 * database closes (e.g. a background follower of pending transactions). Hooks run one at a time,
 * the last registered first; one that fails is logged and the others still run.
 */
export class ShutdownHooks {
  private readonly hooks: { name: string; hook: ShutdownHook }[] = [];

  constructor(private readonly logger: Logger) {}

  add(name: string, hook: ShutdownHook): void {
    this.hooks.push({ name, hook });
  }

  async run(): Promise<void> {
    for (const { name, hook } of this.hooks.splice(0).reverse()) {
      try {
        await hook();
      } catch (err) {
        this.logger.error({ err, hook: name }, "shutdown hook failed");
      }
    }
  }
}
