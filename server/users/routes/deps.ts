import { createHash } from "node:crypto";
import type Koa from "koa";
import type { z } from "zod";
import { ApiError } from "../../http/errors";
import type { PasswordHasher } from "../password";
import type { UserRateLimiter } from "../rate-limit";
import type { UserInputValue, UserOutput } from "../schemas";
import { Username } from "../schemas";
import { UsernameTakenError, type StoredUser, type UserChanges, type UserStore } from "../store";

/** What every user route handler needs, built once by createUserRouter. */
export interface UserRouteDeps {
  store: UserStore;
  limiter: UserRateLimiter;
  hasher: PasswordHasher;
  sessionTtlMs: number;
  now: () => number;
  /** A hash of a random password, verified against when the user is unknown (equal timing). */
  dummyHash: () => Promise<string>;
}

/** The `{username}` path parameter, or 400 INVALID_USERNAME. */
export function usernameParam(params: Record<string, string>): string {
  const result = Username.safeParse(params.username);
  if (!result.success) throw new ApiError("INVALID_USERNAME", "Invalid username: 1-64 characters of A-Z a-z 0-9 . _ -");
  return result.data;
}

export function toUserOutput(user: StoredUser): z.infer<typeof UserOutput> {
  return {
    id: user.id.toString(),
    username: user.username,
    ...(user.firstName !== null ? { firstName: user.firstName } : {}),
    ...(user.lastName !== null ? { lastName: user.lastName } : {}),
    ...(user.email !== null ? { email: user.email } : {}),
    ...(user.phone !== null ? { phone: user.phone } : {}),
    ...(user.userStatus !== null ? { userStatus: user.userStatus } : {}),
  };
}

/** The stored fields of a parsed request user (null read as absent), password already hashed. */
export function toUserFields(input: UserInputValue, passwordHash: string | undefined): UserChanges {
  const fields: UserChanges = {};
  if (input.id != null) fields.id = input.id;
  if (input.username != null) fields.username = input.username;
  if (input.firstName != null) fields.firstName = input.firstName;
  if (input.lastName != null) fields.lastName = input.lastName;
  if (input.email != null) fields.email = input.email;
  if (input.phone != null) fields.phone = input.phone;
  if (input.userStatus != null) fields.userStatus = input.userStatus;
  if (passwordHash !== undefined) fields.passwordHash = passwordHash;
  return fields;
}

/** Runs a store write, answering 409 USERNAME_TAKEN for a username clash. */
export async function usernameMustBeFree<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof UsernameTakenError) throw new ApiError("USERNAME_TAKEN", err.message);
    throw err;
  }
}

/** 409 USERNAME_TAKEN when one of `usernames` exists: checked before any password is hashed. */
export async function usernamesMustBeFree(store: UserStore, usernames: string[]): Promise<void> {
  const taken = await store.firstTakenUsername(usernames);
  if (taken !== null) throw new ApiError("USERNAME_TAKEN", new UsernameTakenError(taken).message);
}

/** 429 RATE_LIMITED with Retry-After when the client address has created too much this window. */
export async function creationAllowed(ctx: Koa.Context, deps: UserRouteDeps): Promise<void> {
  const admission = await deps.limiter.admitCreation(ctx.ip);
  if (!admission.allowed) {
    throw new ApiError("RATE_LIMITED", "Too many user creation requests; retry later", undefined, {
      "Retry-After": String(admission.retryAfterSeconds),
    });
  }
}

/** Sessions are stored by the SHA-256 of their token; the token itself is only ever in the response. */
export function sessionTokenHash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The session token a request carries: `Authorization: Bearer <token>`, else Petstore's `api_key: <token>`. */
export function sessionToken(ctx: Koa.Context): string | undefined {
  const bearer = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(ctx.get("Authorization"))?.[1];
  const apiKey = ctx.get("api_key").trim();
  return bearer ?? (apiKey !== "" ? apiKey : undefined);
}

/**
 * The request must carry a live session of `username`: 401 UNAUTHORIZED without one (none,
 * unknown, expired or logged out), 403 FORBIDDEN with another user's.
 */
export async function requireSessionOf(ctx: Koa.Context, deps: UserRouteDeps, username: string): Promise<void> {
  const token = sessionToken(ctx);
  const session = token ? await deps.store.findSession(sessionTokenHash(token), new Date(deps.now())) : null;
  if (!session) {
    throw new ApiError(
      "UNAUTHORIZED",
      "A live session of this user is required: log in, then send Authorization: Bearer <token> or api_key: <token>",
      undefined,
      { "WWW-Authenticate": 'Bearer realm="v2/user"' },
    );
  }
  if (session.username !== username) throw new ApiError("FORBIDDEN", "This session belongs to another user");
}
