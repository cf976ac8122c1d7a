/** Demo users under /v2/user (Swagger Petstore's user group) on PGlite or PostgreSQL. */
export { openUserStore, type OpenUserStoreOptions } from "./open";
export { SqlUserStore } from "./sql-store";
export { createUserRouter, registerUserOpenApi, USER_ROUTE_PREFIX, type UserRouterDeps } from "./router";
export {
  UsernameTakenError,
  type NewUser,
  type StoredUser,
  type UserChanges,
  type UserStore,
  type Session,
} from "./store";
export { LoginRateLimiter, DEFAULT_LOGIN_RATE_LIMITS, type LoginRateLimits } from "./rate-limit";
export { DEFAULT_SCRYPT_PARAMS, hashPassword, verifyPassword, type ScryptParams } from "./password";
