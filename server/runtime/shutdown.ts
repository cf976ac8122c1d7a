import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Logger } from "../http/logger";

/**
 * An HTTP server that can stop gracefully: it counts the requests in flight so that closing it
 * stops accepting connections, lets those requests finish, and cuts connections only once a
 * bound has passed. Attach it before the server serves its first request.
 */
export class DrainableServer {
  /** Responses not yet finished (or abandoned by their client). */
  private readonly inFlight = new Set<ServerResponse>();
  private closing = false;

  constructor(readonly server: Server) {
    // First of the "request" listeners, so that the count includes every request the app sees.
    server.prependListener("request", (_req: IncomingMessage, res: ServerResponse) => this.track(res));
  }

  private track(res: ServerResponse): void {
    this.inFlight.add(res);
    if (this.closing) closeAfter(res);
    res.once("close", () => {
      this.inFlight.delete(res);
      if (this.closing) this.server.closeIdleConnections();
    });
  }

  /**
   * Stops accepting connections, closes idle ones, and waits for the requests in flight to be
   * answered (each connection then closes); after `timeoutMs` whatever is left is cut. Resolves
   * once the server is closed, telling how many requests were cut.
   */
  async close(timeoutMs: number): Promise<{ cut: number }> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const res of this.inFlight) closeAfter(res);
    this.server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<"expired">((resolve) => (timer = setTimeout(() => resolve("expired"), timeoutMs)));
    const outcome = await Promise.race([closed.then(() => "closed" as const), expired]);
    clearTimeout(timer);
    let cut = 0;
    if (outcome === "expired") {
      cut = this.inFlight.size;
      this.server.closeAllConnections();
      await closed;
    }
    return { cut };
  }
}

/** Ends the response's connection once it is answered, instead of keeping it alive. */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader("Connection", "close");
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
