import { randomBytes } from "node:crypto";
import Router from "@koa/router";
import type { SqlDriver } from "../db";
import type { OpenAPIRegistry } from "../http/openapi";
import { HashScheduler, defaultHashSchedulerLimits, type HashSchedulerLimits } from "./hash-scheduler";
import { DEFAULT_ARGON2_PARAMS, PasswordHasher, hashPassword, type Argon2Params } from "./password";
import { DEFAULT_USER_RATE_LIMITS, UserRateLimiter, type UserRateLimits } from "./rate-limit";
import { mountCreateUser, registerCreateUserOpenApi } from "./routes/create-user";
import { mountCreateWithList, registerCreateWithListOpenApi } from "./routes/create-with-list";
import { mountDeleteUser, registerDeleteUserOpenApi } from "./routes/delete-user";
import type { UserRouteDeps } from "./routes/deps";
import { mountGetUser, registerGetUserOpenApi } from "./routes/get-user";
import { mountLogin, registerLoginOpenApi } from "./routes/login";
import { mountLogout, registerLogoutOpenApi } from "./routes/logout";
import { registerSessionSecuritySchemes } from "./routes/session-security";
import { mountUpdateUser, registerUpdateUserOpenApi } from "./routes/update-user";
import type { UserStore } from "./store";

export const USER_ROUTE_PREFIX = "/v2/user";
export const DEFAULT_SESSION_TTL_MS = 60 * 60 * 1000;

export interface UserRouterDeps {
  store: UserStore;
  /**
   * The service's database: on a PostgreSQL server the abuse counters live there (shared by every
   * instance on it); on PGlite, or unset, in this process's memory.
   */
  database?: SqlDriver;
  /** Overrides of the login and creation limits (API.md's by default). */
  rateLimits?: Partial<UserRateLimits>;
  passwordParams?: Argon2Params;
  /** Overrides of the hashing slots (see HashScheduler). */
  hashing?: Partial<HashSchedulerLimits>;
  sessionTtlMs?: number;
  /** Milliseconds since the epoch, for sessions; injectable for tests. */
  now?: () => number;
}

/** The Petstore user group under /v2/user. */
export function createUserRouter(deps: UserRouterDeps): Router {
  const now = deps.now ?? Date.now;
  const params = deps.passwordParams ?? DEFAULT_ARGON2_PARAMS;
  const hasher = new PasswordHasher(params, new HashScheduler({ ...defaultHashSchedulerLimits(), ...deps.hashing }));
  // Made now, not at the first login, so that first unknown-user login is not slower than the rest.
  const dummyHash = hashPassword(randomBytes(16).toString("hex"), params);
  const routeDeps: UserRouteDeps = {
    store: deps.store,
    limiter: new UserRateLimiter({ ...DEFAULT_USER_RATE_LIMITS, ...deps.rateLimits }, deps.database),
    hasher,
    sessionTtlMs: deps.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS,
    now,
    dummyHash: () => dummyHash,
  };
  const router = new Router({ prefix: USER_ROUTE_PREFIX });
  // Fixed paths before /:username, so GET /login is never read as a user named "login".
  mountLogin(router, routeDeps);
  mountLogout(router, routeDeps);
  mountCreateWithList(router, routeDeps);
  mountCreateUser(router, routeDeps);
  mountGetUser(router, routeDeps);
  mountUpdateUser(router, routeDeps);
  mountDeleteUser(router, routeDeps);
  return router;
}

export function registerUserOpenApi(registry: OpenAPIRegistry): void {
  registerSessionSecuritySchemes(registry);
  registerLoginOpenApi(registry);
  registerLogoutOpenApi(registry);
  registerCreateWithListOpenApi(registry);
  registerCreateUserOpenApi(registry);
  registerGetUserOpenApi(registry);
  registerUpdateUserOpenApi(registry);
  registerDeleteUserOpenApi(registry);
}
