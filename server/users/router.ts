import { randomBytes } from "node:crypto";
import Router from "@koa/router";
import type { OpenAPIRegistry } from "../http/openapi";
import { DEFAULT_SCRYPT_PARAMS, hashPassword, type ScryptParams } from "./password";
import { DEFAULT_LOGIN_RATE_LIMITS, LoginRateLimiter, type LoginRateLimits } from "./rate-limit";
import { mountCreateUser, registerCreateUserOpenApi } from "./routes/create-user";
import { mountCreateWithList, registerCreateWithListOpenApi } from "./routes/create-with-list";
import { mountDeleteUser, registerDeleteUserOpenApi } from "./routes/delete-user";
import type { UserRouteDeps } from "./routes/deps";
import { mountGetUser, registerGetUserOpenApi } from "./routes/get-user";
import { mountLogin, registerLoginOpenApi } from "./routes/login";
import { mountLogout, registerLogoutOpenApi } from "./routes/logout";
import { mountUpdateUser, registerUpdateUserOpenApi } from "./routes/update-user";
import type { UserStore } from "./store";

export const USER_ROUTE_PREFIX = "/v2/user";
export const DEFAULT_SESSION_TTL_MS = 60 * 60 * 1000;

export interface UserRouterDeps {
  store: UserStore;
  /** Overrides of the login limits (per process); ignored when `rateLimiter` is given. */
  rateLimits?: Partial<LoginRateLimits>;
  rateLimiter?: LoginRateLimiter;
  scryptParams?: ScryptParams;
  sessionTtlMs?: number;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
}

/** The Petstore user group under /v2/user. */
export function createUserRouter(deps: UserRouterDeps): Router {
  const now = deps.now ?? Date.now;
  const scryptParams = deps.scryptParams ?? DEFAULT_SCRYPT_PARAMS;
  // Made now, not at the first login, so that first unknown-user login is not slower than the rest.
  const dummyHash = hashPassword(randomBytes(16).toString("hex"), scryptParams);
  const routeDeps: UserRouteDeps = {
    store: deps.store,
    limiter: deps.rateLimiter ?? new LoginRateLimiter({ ...DEFAULT_LOGIN_RATE_LIMITS, ...deps.rateLimits }, now),
    scryptParams,
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
  registerLoginOpenApi(registry);
  registerLogoutOpenApi(registry);
  registerCreateWithListOpenApi(registry);
  registerCreateUserOpenApi(registry);
  registerGetUserOpenApi(registry);
  registerUpdateUserOpenApi(registry);
  registerDeleteUserOpenApi(registry);
}
