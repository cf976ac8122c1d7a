import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createKoaApp } from "../../server/http/koa-app";
import { createLogger } from "../../server/http/logger";
import { createUserRouter, type UserRouterDeps, type UserStore } from "../../server/users";
import { checkAnswer } from "../support/openapi-answers";

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body (undefined when it is not JSON). */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** The user routes on a real listener (port 0), logging into `logs` instead of stdout. */
export interface UserServer {
  readonly baseUrl: string;
  readonly host: string;
  /** Every log line written, as JSON text. */
  readonly logs: string[];
  /** Every response (status line, headers and body) this server's `call` saw, as text. */
  readonly transcript: string[];
  call(
    method: string,
    path: string,
    options?: { body?: unknown; rawBody?: string; headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Reply>;
  close(): Promise<void>;
}

/**
 * `trustProxy` is TRUST_PROXY: the client address is then the last X-Forwarded-For entry, which
 * lets a test speak from as many addresses as it likes.
 */
export async function startUserServer(
  store: UserStore,
  deps: Partial<UserRouterDeps> = {},
  logs: string[] = [],
  { trustProxy = false }: { trustProxy?: boolean } = {},
): Promise<UserServer> {
  const logger = createLogger("info", { write: (line: string) => void logs.push(line) });
  const app = createKoaApp({ logger, trustProxy, routers: [createUserRouter({ ...deps, store })] });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  const { port } = server.address() as AddressInfo;
  const host = `127.0.0.1:${port}`;
  const baseUrl = `http://${host}`;
  const transcript: string[] = [];
  return {
    baseUrl,
    host,
    logs,
    transcript,
    async call(method, path, options = {}) {
      const hasBody = options.body !== undefined || options.rawBody !== undefined;
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { ...(hasBody ? { "Content-Type": "application/json" } : {}), ...options.headers },
        body: options.rawBody ?? (options.body !== undefined ? JSON.stringify(options.body) : undefined),
        signal: options.signal,
      });
      const text = await response.text();
      transcript.push(`${response.status} ${JSON.stringify([...response.headers])} ${text}`);
      checkAnswer({
        method,
        url: path,
        status: response.status,
        contentType: response.headers.get("content-type"),
        text,
      });
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: response.status, headers: response.headers, text, json };
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (!server.listening) return resolve(); // closing twice is fine
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
