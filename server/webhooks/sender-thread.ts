/**
 * The thread that signs and POSTs deliveries. Each POST costs CPU for HTTP (and TLS), and on
 * PGlite the service's main thread is also its database: sent from here, they run beside the
 * writes instead of between them.
 *
 * `senderThreadMain` runs in a worker_threads Worker from its own source text (eval), so the
 * thread needs no TypeScript loader: it must stay self-contained, with its modules required
 * inside it. The main thread checks every address the thread is about to connect to (the SSRF
 * guard's lookup, asked through a message per new connection).
 */

/** One delivery attempt to POST: signed in the thread, with the attempt's own timestamp. */
export interface ThreadPost {
  id: number;
  url: string;
  body: string;
  /** The event's id (webhook-id) and the secrets that sign it (two during a rotation). */
  eventId: string;
  secrets: string[];
}

/** Main thread → sender thread. */
export type ToSender =
  | { t: "posts"; list: ThreadPost[] }
  | { t: "lookup"; id: number; error?: { message: string; code?: string; forbidden: boolean }; addresses?: Address[] }
  | { t: "close" };

/** Sender thread → main thread. */
export type FromSender =
  | { t: "results"; list: { id: number; result: ThreadResult }[] }
  | { t: "lookup"; id: number; hostname: string; family: number; all: boolean };

export interface Address {
  address: string;
  family: number;
}

export type ThreadResult =
  { kind: "answered"; status: number; ms: number } | { kind: "error"; error: string; forbidden: boolean; ms: number };

export interface SenderThreadData {
  timeoutMs: number;
  socketsPerOrigin: number;
  /** Where undici is (resolved on the main thread: the thread's code has no module of its own). */
  undiciPath: string;
}

/**
 * The `webhook-signature` header of Standard Webhooks: `v1,<base64 HMAC-SHA256 of id.timestamp.body>`
 * for each secret, space-separated (two during a rotation). Checked against the `standardwebhooks`
 * package's own `Webhook.verify` and `Webhook.sign` in the tests; node:crypto here, for speed.
 * Self-contained like senderThreadMain: the thread runs it from its source text.
 */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- self-contained (see above)
  const { createHmac } = require("node:crypto") as typeof import("node:crypto");
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
      return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
    })
    .join(" ");
}

/** The thread's source text: its main, with what it calls. */
export function senderThreadSource(): string {
  return `const signatureHeader = ${signatureHeader.toString()};\n(${senderThreadMain.toString()})()`;
}

export function senderThreadMain(): void {
  /* eslint-disable @typescript-eslint/no-require-imports -- see above: no module imports in the thread */
  const { parentPort, workerData } = require("node:worker_threads") as typeof import("node:worker_threads");
  const { undiciPath, timeoutMs, socketsPerOrigin } = workerData as SenderThreadData;
  const { Agent } = require(undiciPath) as typeof import("undici");
  /* eslint-enable @typescript-eslint/no-require-imports */
  const port = parentPort!;

  // Lookups answered by the main thread (the guard), by id.
  let nextLookup = 0;
  const lookups = new Map<number, (answer: Extract<ToSender, { t: "lookup" }>) => void>();
  const lookup: import("node:net").LookupFunction = (hostname, options, callback) => {
    const id = nextLookup++;
    lookups.set(id, (answer) => {
      if (answer.error) {
        const err = Object.assign(new Error(answer.error.message), {
          code: answer.error.code,
          forbidden: answer.error.forbidden,
        });
        return callback(err, "", 0);
      }
      const addresses = answer.addresses ?? [];
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
    port.postMessage({ t: "lookup", id, hostname, family: options.family ?? 0, all: Boolean(options.all) });
  };
  // undici rather than node:http: a third of the CPU per POST, on a machine whose cores the
  // service's writes and the chain share. Kept-alive connections per origin; no redirect is followed.
  const agent = new Agent({
    connections: socketsPerOrigin,
    connect: { lookup },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  /** The requests in flight (cut at shutdown), each until its answer ends. */
  const inFlight = new Set<import("undici").Dispatcher.DispatchController>();

  // Results go back in one message per turn of the event loop (held longer, they hold the
  // endpoint's slots longer, and the cursor's deliveries spill into the queue).
  let results: { id: number; result: ThreadResult }[] = [];
  const report = (id: number, result: ThreadResult) => {
    if (results.length === 0) setImmediate(flush);
    results.push({ id, result });
  };
  const flush = () => {
    const list = results;
    results = [];
    if (list.length > 0) port.postMessage({ t: "results", list });
  };

  /** An error's message for the delivery log: the kind of failure, never a URL's credentials. */
  const describe = (err: unknown): string => {
    const e = err as NodeJS.ErrnoException & { forbidden?: boolean };
    if (e.forbidden) return `forbidden address: ${e.message}`;
    return (e.code ? `${e.code}: ` : "") + String(e.message ?? err).slice(0, 200);
  };

  const post = ({ id, url, body, eventId, secrets }: ThreadPost) => {
    const started = performance.now();
    // The attempt's own timestamp, as receivers check it.
    const timestamp = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "nft-ops-webhooks/0.1",
      "webhook-id": eventId,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signatureHeader(secrets, eventId, timestamp, body),
    };
    const ms = () => Math.round(performance.now() - started);
    const target = new URL(url);
    let request: import("undici").Dispatcher.DispatchController | undefined;
    let settled = false;
    const settle = (result: ThreadResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      report(id, result);
    };
    const timer = setTimeout(() => {
      settle({ kind: "error", error: `no answer within ${timeoutMs} ms`, forbidden: false, ms: ms() });
      request?.abort(new Error("timed out"));
    }, timeoutMs);
    // dispatch() with a handler rather than request(): no response stream, promise or
    // AbortController per POST (0.09 against 0.12 ms of CPU per POST, posting from one thread,
    // 13 every 30 ms to a minimal receiver). A delivery is its answer's status, settled when the
    // headers come; the body is read and dropped, so the connection serves the next.
    agent.dispatch(
      {
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: "POST",
        // Credentials in the URL, as node:http sent them.
        headers: target.username
          ? {
              ...headers,
              authorization: `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString("base64")}`,
            }
          : headers,
        body,
      },
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
        onResponseError(controller, err: Error & { forbidden?: boolean }) {
          inFlight.delete(controller);
          settle({ kind: "error", error: describe(err), forbidden: Boolean(err.forbidden), ms: ms() });
        },
      },
    );
  };

  port.on("message", (message: ToSender) => {
    if (message.t === "posts") {
      for (const p of message.list) post(p);
    } else if (message.t === "lookup") {
      const answer = lookups.get(message.id);
      lookups.delete(message.id);
      answer?.(message);
    } else {
      // Shutdown: every request in flight is cut (reported as such), then the thread ends.
      for (const request of inFlight) request.abort(new Error("the service is stopping"));
      void agent.destroy().catch(() => {});
      setImmediate(() => {
        flush();
        port.close();
      });
    }
  });
}
