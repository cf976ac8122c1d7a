import { createHash } from "node:crypto";
import { ApiError } from "../../http/errors";
import type { ScryptParams } from "../password";
import type { LoginRateLimiter } from "../rate-limit";
import type { UserInputValue, UserOutput } from "../schemas";
import { Username } from "../schemas";
import { UsernameTakenError, type StoredUser, type UserChanges, type UserStore } from "../store";
import type { z } from "zod";

/** What every user route handler needs, built once by createUserRouter. */
export interface UserRouteDeps {
  store: UserStore;
  limiter: LoginRateLimiter;
  scryptParams: ScryptParams;
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

/** Sessions are stored by the SHA-256 of their token; the token itself is only ever in the response. */
export function sessionTokenHash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
