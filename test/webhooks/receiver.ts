/**
 * A webhook receiver in the test process: a real HTTP server on a free loopback port that keeps
 * every delivery (headers, raw body, arrival time) and answers as the test says: a status, after
 * a delay, or never (the request is held until the receiver closes).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface Delivery {
  /** The request's path (and query): endpoints may share a receiver under different paths. */
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  headers: Record<string, string>;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  at: number;
}

/** What to answer to the n-th delivery (0-based): a status, a delay first or headers, or "hold" (never answer). */
export type Answer = number | { status: number; delayMs?: number; headers?: Record<string, string> } | "hold";

export class Receiver {
  readonly deliveries: Delivery[] = [];
  private readonly held = new Set<ServerResponse>();
  private waiters: Array<() => void> = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private answer: (delivery: Delivery, index: number) => Answer,
  ) {}

  static async start(answer: (delivery: Delivery, index: number) => Answer = () => 200): Promise<Receiver> {
    const handlers: { receiver?: Receiver } = {};
    const server = createServer((req, res) => void handlers.receiver!.handle(req, res));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    handlers.receiver = new Receiver(server, `http://127.0.0.1:${port}/hook`, answer);
    return handlers.receiver;
  }

  /** Requests held open now (answered "hold", not yet closed by the sender). */
  get holding(): number {
    return this.held.size;
  }

  answerWith(answer: (delivery: Delivery, index: number) => Answer): void {
    this.answer = answer;
  }

  /** Deliveries whose body type is `type`. */
  ofType(type: string): Delivery[] {
    return this.deliveries.filter((d) => d.json.type === type);
  }

  /** Resolves once `done` holds over the deliveries; fails after `timeoutMs`. */
  async until(done: (deliveries: Delivery[]) => boolean, timeoutMs = 15_000, what = "deliveries"): Promise<Delivery[]> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this.deliveries)) {
      if (Date.now() > deadline)
        throw new Error(
          `${what}: not there after ${timeoutMs} ms; got ${this.deliveries.map((d) => d.json.type).join(", ")}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.deliveries;
  }

  /** Throws unless `delivery` verifies under `secret` with standardwebhooks' own Webhook.verify. */
  static verify(secret: string, delivery: Pick<Delivery, "body" | "headers">): unknown {
    return new Webhook(secret).verify(delivery.body, delivery.headers);
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]),
    );
    const delivery: Delivery = {
      path: req.url ?? "/",
      id: headers["webhook-id"],
      timestamp: headers["webhook-timestamp"],
      signature: headers["webhook-signature"],
      headers,
      body,
      json: JSON.parse(body) as Delivery["json"],
      at: Date.now(),
    };
    const index = this.deliveries.length;
    this.deliveries.push(delivery);
    const answer = this.answer(delivery, index);
    const wake = () => {
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
    };
    if (answer === "hold") {
      this.held.add(res);
      res.on("close", () => this.held.delete(res));
      wake();
      return;
    }
    const { status, delayMs = 0, headers: extra = {} } = typeof answer === "number" ? { status: answer } : answer;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    res.writeHead(status, { "content-type": "text/plain", ...extra }).end("ok");
    wake();
  }
}
