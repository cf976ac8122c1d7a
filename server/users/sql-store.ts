import { isUniqueViolation, type SqlDriver, type SqlExecutor } from "../db";
import {
  UsernameTakenError,
  type NewUser,
  type Session,
  type StoredUser,
  type UserChanges,
  type UserStore,
} from "./store";

const USER_COLUMNS = `id::text AS id, username, first_name, last_name, email, phone, user_status, password_hash`;

interface UserRow {
  id: string;
  username: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  user_status: number | null;
  password_hash: string | null;
}

/** Column of each changeable field; the only names ever put into SQL text. */
const CHANGE_COLUMNS: Record<keyof UserChanges, string> = {
  id: "id",
  username: "username",
  firstName: "first_name",
  lastName: "last_name",
  email: "email",
  phone: "phone",
  userStatus: "user_status",
  passwordHash: "password_hash",
};

/** The UserStore over either SQL driver: the same statements run on PGlite and PostgreSQL. */
export class SqlUserStore implements UserStore {
  readonly backend: "pglite" | "postgres";

  constructor(
    private readonly db: SqlDriver,
    /** Whether close() closes the database too (a store opened on its own) or leaves it to its owner. */
    private readonly options: { ownsDatabase?: boolean } = {},
  ) {
    this.backend = db.backend;
  }

  async createUsers(users: NewUser[]): Promise<StoredUser[]> {
    const seen = new Set<string>();
    for (const user of users) {
      if (seen.has(user.username)) throw new UsernameTakenError(user.username);
      seen.add(user.username);
    }
    if (users.length === 0) return [];
    const names = users.map((user) => user.username);
    return uniqueToTaken(
      () =>
        this.db.transaction(async (tx) => {
          const taken = await firstTaken(tx, names);
          if (taken !== null) throw new UsernameTakenError(taken);
          // One statement for the whole batch: arrays in, unnest to rows. A concurrent insert of the
          // same name still fails here on the primary key (23505), which becomes UsernameTakenError.
          const { rows } = await tx.query<UserRow>(
            `INSERT INTO users (username, id, first_name, last_name, email, phone, user_status, password_hash)
             SELECT u.username, COALESCE(u.id, nextval('user_id_seq')), u.first_name, u.last_name, u.email, u.phone,
                    u.user_status, u.password_hash
             FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::integer[], $8::text[])
               AS u (username, id, first_name, last_name, email, phone, user_status, password_hash)
             RETURNING ${USER_COLUMNS}`,
            [
              names,
              users.map((user) => (user.id === undefined ? null : user.id.toString())),
              users.map((user) => user.firstName ?? null),
              users.map((user) => user.lastName ?? null),
              users.map((user) => user.email ?? null),
              users.map((user) => user.phone ?? null),
              users.map((user) => user.userStatus ?? null),
              users.map((user) => user.passwordHash ?? null),
            ],
          );
          return rows.map(toUser);
        }),
      // The clash was with a concurrent insert: name the user it took, asked for again.
      async () => (await firstTaken(this.db, names)) ?? undefined,
    );
  }

  async firstTakenUsername(usernames: string[]): Promise<string | null> {
    return usernames.length === 0 ? null : firstTaken(this.db, usernames);
  }

  async findUser(username: string): Promise<StoredUser | null> {
    const { rows } = await this.db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE username = $1`, [username]);
    return rows.length > 0 ? toUser(rows[0]) : null;
  }

  async updateUser(username: string, changes: UserChanges): Promise<StoredUser | null> {
    const fields = (Object.keys(CHANGE_COLUMNS) as (keyof UserChanges)[]).filter((key) => changes[key] !== undefined);
    if (fields.length === 0) return this.findUser(username);
    const params: unknown[] = [username];
    const assignments = fields.map((key) => {
      const value = changes[key];
      params.push(typeof value === "bigint" ? value.toString() : value);
      return `${CHANGE_COLUMNS[key]} = $${params.length}`;
    });
    const { rows } = await uniqueToTaken(
      () =>
        this.db.query<UserRow>(
          `UPDATE users SET ${assignments.join(", ")}, updated_at = now() WHERE username = $1 RETURNING ${USER_COLUMNS}`,
          params,
        ),
      async () => changes.username,
    );
    return rows.length > 0 ? toUser(rows[0]) : null;
  }

  async deleteUser(username: string): Promise<boolean> {
    const { rowCount } = await this.db.query("DELETE FROM users WHERE username = $1", [username]);
    return rowCount > 0;
  }

  async createSession(tokenHash: string, username: string, expiresAt: Date): Promise<boolean> {
    // INSERT … SELECT: a user deleted since the password check gets no session (and no FK error).
    const { rowCount } = await this.db.query(
      "INSERT INTO sessions (token_hash, username, expires_at) SELECT $1, username, $3 FROM users WHERE username = $2",
      [tokenHash, username, expiresAt.toISOString()],
    );
    return rowCount > 0;
  }

  async findSession(tokenHash: string, now: Date): Promise<Session | null> {
    const { rows } = await this.db.query<{ username: string; expires_at: Date | string }>(
      "SELECT username, expires_at FROM sessions WHERE token_hash = $1 AND expires_at > $2",
      [tokenHash, now.toISOString()],
    );
    return rows.length > 0 ? { username: rows[0].username, expiresAt: new Date(rows[0].expires_at) } : null;
  }

  async deleteSession(tokenHash: string): Promise<boolean> {
    const { rowCount } = await this.db.query("DELETE FROM sessions WHERE token_hash = $1", [tokenHash]);
    return rowCount > 0;
  }

  async deleteOtherSessions(username: string, keepTokenHash: string): Promise<number> {
    const { rowCount } = await this.db.query("DELETE FROM sessions WHERE username = $1 AND token_hash <> $2", [
      username,
      keepTokenHash,
    ]);
    return rowCount;
  }

  async deleteExpiredSessions(now: Date): Promise<number> {
    const { rowCount } = await this.db.query("DELETE FROM sessions WHERE expires_at <= $1", [now.toISOString()]);
    return rowCount;
  }

  async close(): Promise<void> {
    if (this.options.ownsDatabase) await this.db.close();
  }
}

function toUser(row: UserRow): StoredUser {
  return {
    id: BigInt(row.id),
    username: row.username,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    phone: row.phone,
    userStatus: row.user_status === null ? null : Number(row.user_status),
    passwordHash: row.password_hash,
  };
}

/** The first of `usernames` that exists, or null. */
async function firstTaken(db: SqlExecutor, usernames: string[]): Promise<string | null> {
  const { rows } = await db.query<{ username: string }>(
    "SELECT username FROM users WHERE username = ANY($1::text[]) LIMIT 1",
    [usernames],
  );
  return rows.length > 0 ? rows[0].username : null;
}

/**
 * Runs `fn`, turning a unique violation (23505) into UsernameTakenError naming the user when
 * `clashed` can tell. Not from the error's detail: drivers drop it, as it may quote whole rows.
 */
async function uniqueToTaken<T>(fn: () => Promise<T>, clashed: () => Promise<string | undefined>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    throw new UsernameTakenError(await clashed().catch(() => undefined));
  }
}
