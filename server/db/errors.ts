/**
 * Database errors as they may leave the SQL layer. Drivers attach what a failed statement was
 * given: PGlite's errors carry the query and its params, PostgreSQL's `detail` quotes the row
 * ("Failing row contains (…)", emails and password hashes included), and data-exception messages
 * quote the value. A logger that prints such an error prints all of that, so every driver call
 * turns it into a SqlError: SQLSTATE, schema names, and the server's message only for classes
 * whose messages never quote a value.
 */
export class SqlError extends Error {
  constructor(
    /** SQLSTATE, e.g. 23505. */
    readonly code: string,
    message: string,
    readonly constraint?: string,
    readonly table?: string,
    readonly column?: string,
  ) {
    super(message);
    this.name = "SqlError";
  }
}

/**
 * SQLSTATE classes whose messages name only schema objects or server state (connection, integrity
 * constraint, authorisation, unknown database, transaction rollback, syntax or access rule,
 * resources, object state, operator intervention, system error). Class 22 (data exception:
 * "invalid input syntax for type bigint: \"…\"") and the rest quote values: not kept.
 */
const MESSAGE_KEPT_FOR_CLASSES = new Set(["08", "23", "28", "3D", "40", "42", "53", "54", "55", "57", "58"]);

interface RawDatabaseError {
  code?: unknown;
  severity?: unknown;
  message?: unknown;
  constraint?: unknown;
  table?: unknown;
  column?: unknown;
}

/** Whether `err` came from the database server (PostgreSQL or PGlite) rather than from our code. */
function isRawDatabaseError(err: unknown): err is RawDatabaseError {
  if (typeof err !== "object" || err === null || err instanceof SqlError) return false;
  const raw = err as RawDatabaseError & { params?: unknown; parameters?: unknown; query?: unknown };
  const sqlState = typeof raw.code === "string" && /^[0-9A-Z]{5}$/.test(raw.code);
  return (sqlState && raw.severity !== undefined) || "params" in raw || "parameters" in raw || "query" in raw;
}

/** A database error made safe to log; any other error (ours, thrown inside a transaction) unchanged. */
export function sanitizeDatabaseError(err: unknown): unknown {
  if (!isRawDatabaseError(err)) return err;
  const code = typeof err.code === "string" ? err.code : "XX000";
  const name = (value: unknown) => (typeof value === "string" && value.length <= 63 ? value : undefined);
  const message =
    MESSAGE_KEPT_FOR_CLASSES.has(code.slice(0, 2)) && typeof err.message === "string"
      ? err.message
      : `Database error (SQLSTATE ${code})`;
  return new SqlError(code, message, name(err.constraint), name(err.table), name(err.column));
}

/** Runs one driver call, letting only sanitized errors out. */
export async function sanitized<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw sanitizeDatabaseError(err);
  }
}
