import http from "node:http";
import https from "node:https";
import { gunzipSync } from "node:zlib";
import { makeError } from "ethers";

/** Retries of a call the endpoint throttled (429), within the call's time bound. */
const MAX_THROTTLE_RETRIES = 8;
const THROTTLE_SLOT_MS = 250;
/** What errors name as the request: never the URL, whose path or query may hold an API key. */
const REQUEST_NAME = "POST to RPC_URL";
/** How much of an error response's body an error carries. */
const BODY_EXCERPT = 512;

interface HttpAnswer {
  status: number;
  statusMessage: string;
  retryAfter?: string;
  text: string;
}

/**
 * JSON-RPC over HTTP(S) with node:http, where ethers' FetchRequest would be used: the request
 * goes out in one write (Content-Length, no chunked trailer), connections are kept alive, the
 * whole call (retries included) is bounded by `timeoutMs`, and a 429 is retried after
 * Retry-After or a growing random pause, as ethers does. Failures keep ethers' codes (TIMEOUT,
 * SERVER_ERROR, or the socket's ECONNREFUSED…), and no error carries the URL, whose path and
 * query often hold an API key.
 */
export class HttpJsonRpcTransport {
  private readonly client: typeof http | typeof https;
  private readonly agent: http.Agent;
  private readonly options: http.RequestOptions;

  private readonly throttleRetries: number;

  constructor(
    url: string,
    private readonly timeoutMs: number,
    /** retryThrottled false: a 429 is an error at once (another URL is asked instead). */
    options: { retryThrottled?: boolean } = {},
  ) {
    this.throttleRetries = options.retryThrottled === false ? 0 : MAX_THROTTLE_RETRIES;
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw makeError(`unsupported protocol ${parsed.protocol.replace(/:$/, "")}`, "UNSUPPORTED_OPERATION", {
        operation: "request",
      });
    }
    const secure = parsed.protocol === "https:";
    this.client = secure ? https : http;
    this.agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
    this.options = {
      method: "POST",
      protocol: parsed.protocol,
      hostname: parsed.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: parsed.port || undefined,
      path: `${parsed.pathname}${parsed.search}`,
      agent: this.agent,
      ...(parsed.username
        ? { auth: `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}` }
        : {}),
    };
  }

  /** Posts `body` as JSON and answers the parsed JSON response. */
  async send(body: unknown): Promise<unknown> {
    const json = JSON.stringify(body);
    const payload = Buffer.from(json);
    // A reset before any answer does not prove the node never read the request: a broadcast is
    // never sent again here. broadcast() does that itself, where a second answer other than
    // "accepted" proves nothing (a "nonce too low" from the first one mined would look like a
    // nonce taken by another transaction, and the write would be re-signed: minted twice).
    const calls = (Array.isArray(body) ? body : [body]) as { method?: unknown }[];
    const resendable = !calls.some((call) => call?.method === "eth_sendRawTransaction");
    const deadline = Date.now() + this.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const answer = await this.post(payload, deadline).catch((err: unknown) => {
        // A kept-alive connection the node closed while it sat idle (hardhat node: after 5 s):
        // most likely never read, so a read goes again on a new connection, once.
        if (err instanceof StaleConnection && resendable) return this.post(payload, deadline);
        throw err;
      });
      if (answer.status === 429 && attempt < this.throttleRetries) {
        const pause = throttlePause(answer.retryAfter, attempt);
        if (Date.now() + pause < deadline) {
          await new Promise((resolve) => setTimeout(resolve, pause));
          continue;
        }
      }
      if (answer.status < 200 || answer.status >= 300) {
        throw makeError(`server response ${answer.status} ${answer.statusMessage}`, "SERVER_ERROR", {
          request: REQUEST_NAME,
          info: { responseStatus: `${answer.status} ${answer.statusMessage}`, responseBody: excerpt(answer.text) },
        });
      }
      try {
        return JSON.parse(answer.text) as unknown;
      } catch {
        throw makeError("response body is not valid JSON", "SERVER_ERROR", {
          request: REQUEST_NAME,
          info: { responseBody: excerpt(answer.text) },
        });
      }
    }
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  private post(payload: Buffer, deadline: number): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return reject(makeError("request timeout", "TIMEOUT"));
      let answered = false;
      const request = this.client.request(
        { ...this.options, headers: { "content-type": "application/json", "content-length": payload.length } },
        (response) => {
          answered = true;
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", fail);
          response.on("end", () => {
            clearTimeout(timer);
            try {
              const raw = Buffer.concat(chunks);
              const text = (response.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw).toString("utf8");
              const retryAfter = response.headers["retry-after"];
              resolve({
                status: response.statusCode ?? 0,
                statusMessage: response.statusMessage ?? "",
                retryAfter,
                text,
              });
            } catch (err) {
              reject(err);
            }
          });
        },
      );
      const timer = setTimeout(() => request.destroy(makeError("request timeout", "TIMEOUT")), remaining);
      function fail(err: Error) {
        clearTimeout(timer);
        const reset = (err as NodeJS.ErrnoException).code === "ECONNRESET";
        reject(reset && request.reusedSocket && !answered ? new StaleConnection(err.message) : err);
      }
      request.on("error", fail);
      request.end(payload);
    });
  }
}

/** A reused keep-alive connection reset before any answer: the node closed it while it was idle. */
class StaleConnection extends Error {
  readonly code = "ECONNRESET";
}

/** Retry-After (seconds) when the endpoint gives one, else a random pause growing with each attempt. */
function throttlePause(retryAfter: string | undefined, attempt: number): number {
  if (retryAfter && /^\d+$/.test(retryAfter)) return Number(retryAfter) * 1000;
  return THROTTLE_SLOT_MS * Math.trunc(Math.random() * 2 ** attempt);
}

function excerpt(text: string): string {
  return text.length > BODY_EXCERPT ? `${text.slice(0, BODY_EXCERPT)}…` : text;
}
