/** Webhooks: signed, durable, at-least-once events (API.md, "Webhooks"). */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import Router from "@koa/router";
import type { Registry } from "prom-client";
import type { AccessControl, AuditLog } from "../access";
import type { SqlDriver } from "../db";
import type { Logger } from "../http/logger";
import type { OpenAPIRegistry } from "../http/openapi";
import { WebhookEndpointStore } from "./endpoint-store";
import { WebhookMetrics } from "./metrics";
import { OutboxStore } from "./outbox";
import { createEndpoint } from "./routes/create-endpoint";
import { deleteEndpoint } from "./routes/delete-endpoint";
import { getEndpoint } from "./routes/get-endpoint";
import { listDeliveries } from "./routes/list-deliveries";
import { listEndpoints } from "./routes/list-endpoints";
import { retryDelivery } from "./routes/retry-delivery";
import { rotateSecret } from "./routes/rotate-secret";
import type { WebhookRouteDeps } from "./routes/deps";
import { sendTestEvent } from "./routes/send-test-event";
import { updateEndpoint } from "./routes/update-endpoint";
import { DeliverySender } from "./sender";
import { UrlGuard, type Resolver } from "./url-guard";
import type { MasterKey } from "../wallets/master-key";
import { resealWebhookSecrets, SecretSeal } from "./secret-seal";
import { DEFAULT_WORKER_OPTIONS, WebhookWorker, type WebhookWorkerOptions } from "./worker";

export { emitEvent, emitEvents, eventWanted } from "./events";
export { signatureHeader, newEndpointSecret } from "./signing";
export { UrlGuard, type Resolver } from "./url-guard";
export { retryDelayMs, DEFAULT_RETRY } from "./retry";
export type { WebhookRouteDeps, WebhookWorkerOptions };

/**
 * PGlite runs in this process's thread, one statement at a time, and costs about the same per
 * statement whatever its size: a busy worker there rounds at most every 50 ms, each round
 * recording and claiming more at once. It has no autovacuum: the worker vacuums.
 */
const PGLITE_WORKER: Partial<WebhookWorkerOptions> = { busyPollMs: 50, vacuumEvery: 500 };

export interface WebhookOptions {
  access: AccessControl;
  audit: AuditLog;
  logger: Logger;
  /** Where /metrics reads the webhook figures; none when unset. */
  registry?: Registry;
  /** WEBHOOK_ALLOW_PRIVATE: loopback and private addresses pass the SSRF guard. */
  allowPrivate: boolean;
  /** How host names resolve, for the guard and the connections (default: the system's). */
  resolver?: Resolver;
  /** Worker timing; the tests shorten the retries. */
  worker?: Partial<WebhookWorkerOptions>;
  /** How long a receiver has to answer (10 s). */
  timeoutMs?: number;
  /** WALLET_MASTER_KEY: endpoints' secrets are sealed under it (kept as given without one). */
  masterKey?: MasterKey;
}

/** The webhooks of one service process: routes' dependencies, the delivery worker, the low-balance watcher. */
export type Webhooks = Awaited<ReturnType<typeof openWebhooks>>;

/**
 * The webhooks on the service's database. The worker is returned stopped: start it once the
 * service listens, stop it before the store closes. On PGlite (one process owns the data
 * directory) every lease left by an earlier run is given back at once.
 */
export async function openWebhooks(db: SqlDriver, options: WebhookOptions) {
  const outbox = new OutboxStore(db);
  const { masterKey } = options;
  if (masterKey) await db.transaction((tx) => resealWebhookSecrets(tx, masterKey, masterKey));
  const seal = new SecretSeal(masterKey);
  const endpoints = new WebhookEndpointStore(db, seal);
  const guard = new UrlGuard(options.allowPrivate, options.resolver);
  const pglite = db.backend === "pglite";
  const workerOptions = {
    ...DEFAULT_WORKER_OPTIONS,
    ...(pglite ? PGLITE_WORKER : {}),
    ...options.worker,
  };
  if (pglite) await outbox.releaseLeases();
  const worker = new WebhookWorker({
    outbox,
    endpoints,
    sender: new DeliverySender(guard, options.timeoutMs),
    audit: options.audit,
    logger: options.logger.child({ component: "webhooks" }),
    metrics: options.registry
      ? new WebhookMetrics(options.registry, () => outbox.oldestUndeliveredSeconds())
      : undefined,
    seal,
    owner: `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`,
    options: workerOptions,
  });
  return {
    routes: {
      access: options.access,
      audit: options.audit,
      db,
      endpoints,
      outbox,
      guard,
      retryWindowMs: workerOptions.retry.windowMs,
      wake: () => worker.wake(),
    },
    worker,
    outbox,
  };
}

/** The /webhooks routes, each one file: its declaration, from which its handler and OpenAPI registration are made. */
const ROUTES = [
  createEndpoint,
  listEndpoints,
  getEndpoint,
  updateEndpoint,
  deleteEndpoint,
  rotateSecret,
  sendTestEvent,
  listDeliveries,
  retryDelivery,
];

export function createWebhookRouter(deps: WebhookRouteDeps): Router {
  const router = new Router();
  for (const route of ROUTES) route.mount(router, deps);
  return router;
}

export function registerWebhookOpenApi(registry: OpenAPIRegistry): void {
  for (const route of ROUTES) route.register(registry);
}
