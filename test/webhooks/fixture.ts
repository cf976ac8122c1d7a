/**
 * The webhooks built in this process on a real store (PGlite in a temp dir, or a database on a
 * throwaway PostgreSQL server): the /access-keys and /webhooks routes and /metrics in a Koa app
 * on a free port, and the delivery worker, with the retries shortened so a test sees them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createAccessRouter, openAccess } from "../../server/access";
import { openDatabase, type SqlDriver } from "../../server/db";
import { createKoaApp } from "../../server/http/koa-app";
import { createLogger } from "../../server/http/logger";
import { createServiceRouter } from "../../server/http/service-routes";
import { ServiceMetrics } from "../../server/metrics/metrics";
import {
  createWebhookRouter,
  openWebhooks,
  type Resolver,
  type Webhooks,
  type WebhookWorkerOptions,
} from "../../server/webhooks";
import type { MasterKey } from "../../server/wallets";
import { ApiClient, TEST_API_KEY } from "../api/harness";
import { seedPglite } from "../support/pglite-template";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";

export const ROOT = { authorization: `Bearer ${TEST_API_KEY}` };

/** Where a suite's store lives; the same tests run on each. */
export interface Backend {
  name: "PGlite" | "PostgreSQL";
  /** A fresh empty store; `release` drops it. */
  open(): Promise<{ db: SqlDriver; databaseUrl?: string; release(): Promise<void> }>;
  stop(): Promise<void>;
}

export function pgliteBackend(): Backend {
  return {
    name: "PGlite",
    async open() {
      const dir = mkdtempSync(path.join(tmpdir(), "webhooks-test-"));
      const db = await openDatabase({ dataDir: await seedPglite(path.join(dir, "pglite")) });
      return {
        db,
        async release() {
          await db.close().catch(() => undefined);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
    async stop() {},
  };
}

export function postgresBackend(): Backend {
  let server: Promise<PostgresServer> | undefined;
  return {
    name: "PostgreSQL",
    async open() {
      server ??= startPostgresServer();
      const databaseUrl = await (await server).createDatabase();
      const db = await openDatabase({ databaseUrl, dataDir: "" });
      return { db, databaseUrl, release: () => db.close() };
    },
    async stop() {
      await (await server)?.stop();
    },
  };
}

/** Fast retries: a 500 is tried again within a second. */
export const FAST_WORKER: Partial<WebhookWorkerOptions> = {
  retry: { baseMs: 100, capMs: 400, windowMs: 60_000 },
  idlePollMs: 50,
};

export interface WebhookApp {
  api: ApiClient;
  db: SqlDriver;
  webhooks: Webhooks;
  metrics: ServiceMetrics;
  close(): Promise<void>;
}

export async function startWebhookApp(
  db: SqlDriver,
  options: {
    allowPrivate?: boolean;
    resolver?: Resolver;
    worker?: Partial<WebhookWorkerOptions>;
    timeoutMs?: number;
    startWorker?: boolean;
    masterKey?: MasterKey;
  } = {},
): Promise<WebhookApp> {
  const logger = createLogger("silent");
  const metrics = new ServiceMetrics({ processMetrics: false });
  const { access, audit } = openAccess(db, { rootKey: TEST_API_KEY, logger });
  const webhooks = await openWebhooks(db, {
    access,
    audit,
    logger,
    registry: metrics.registry,
    allowPrivate: options.allowPrivate ?? true,
    resolver: options.resolver,
    worker: { ...FAST_WORKER, ...options.worker },
    timeoutMs: options.timeoutMs,
    masterKey: options.masterKey,
  });
  const app = createKoaApp({
    logger,
    metrics,
    routers: [
      createServiceRouter({
        // No chain in these tests: only /metrics of this router is used.
        chain: async () => ({ chainId: "31337", blockNumber: 0 }),
        metrics: async () => ({ contentType: metrics.contentType, text: await metrics.render() }),
      }),
      createAccessRouter({ access, audit, db }),
      createWebhookRouter(webhooks.routes),
    ],
  });
  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  if (options.startWorker !== false) webhooks.worker.start();
  return {
    api: new ApiClient(`http://127.0.0.1:${port}`),
    db,
    webhooks,
    metrics,
    async close() {
      await webhooks.worker.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Resolves with the probe's first value other than undefined (asked every 50 ms); fails after `timeoutMs`. */
export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(50);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
