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
export { UserRateLimiter, DEFAULT_USER_RATE_LIMITS, type UserRateLimits } from "./rate-limit";
export {
  DEFAULT_ARGON2_PARAMS,
  PasswordHasher,
  hashPassword,
  needsRehash,
  verifyPassword,
  type Argon2Params,
} from "./password";
export { HashScheduler, defaultHashSchedulerLimits, type HashLane, type HashSchedulerLimits } from "./hash-scheduler";
