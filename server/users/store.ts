/**
 * The user store: one interface over the demo users and their login sessions, with two
 * backends (PGlite on disk, a PostgreSQL server) that share one SQL schema. Free of Koa, so
 * scripts and benchmarks use the same code as the routes.
 */

/** A user as stored. `passwordHash` never leaves the server. */
export interface StoredUser {
  id: bigint;
  username: string;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  phone: string | null;
  userStatus: number | null;
  /** Encoded password hash (argon2id, or a legacy scrypt one; see password.ts), or null: cannot log in. */
  passwordHash: string | null;
}

/** A user to create; `id` is assigned from a sequence when absent. */
export interface NewUser {
  id?: bigint;
  username: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  phone?: string;
  userStatus?: number;
  passwordHash?: string;
}

/** Fields to change; absent fields keep their value. A new `username` renames the user. */
export type UserChanges = Partial<NewUser>;

export interface Session {
  username: string;
  expiresAt: Date;
}

export interface UserStore {
  readonly backend: "pglite" | "postgres";
  /** Stores every user in one transaction, or none: throws UsernameTakenError on any clash. */
  createUsers(users: NewUser[]): Promise<StoredUser[]>;
  findUser(username: string): Promise<StoredUser | null>;
  /** The first of `usernames` that exists already, or null: a cheap check before hashing passwords. */
  firstTakenUsername(usernames: string[]): Promise<string | null>;
  /** Null when no such user; throws UsernameTakenError when a rename clashes. */
  updateUser(username: string, changes: UserChanges): Promise<StoredUser | null>;
  deleteUser(username: string): Promise<boolean>;
  /** Stores a session keyed by the hash of its token; false when the user no longer exists. */
  createSession(tokenHash: string, username: string, expiresAt: Date): Promise<boolean>;
  /** The unexpired session with this token hash, if any. */
  findSession(tokenHash: string, now: Date): Promise<Session | null>;
  deleteSession(tokenHash: string): Promise<boolean>;
  /** Ends every session of `username` but the one with `keepTokenHash`; answers how many ended. */
  deleteOtherSessions(username: string, keepTokenHash: string): Promise<number>;
  deleteExpiredSessions(now: Date): Promise<number>;
  close(): Promise<void>;
}

/** A username exists already, or repeats within one batch. */
export class UsernameTakenError extends Error {
  constructor(readonly username: string | undefined) {
    super(username === undefined ? "Username is already taken" : `Username "${username}" is already taken`);
    this.name = "UsernameTakenError";
  }
}
