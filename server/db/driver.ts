/** The little of SQL access the service needs, so PGlite and `pg` look the same to it. */
export interface SqlExecutor {
  /** One statement with $n parameters. */
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: R[]; rowCount: number }>;
  /** A script of statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * COPY `table` (`columns`) FROM `rows`, in COPY's text format (copyText): the bulk load, for
   * thousands of rows at once. Cheaper than an INSERT of them from one JSON parameter, which PGlite
   * moves into its memory at about 20 ns a byte and PostgreSQL parses again.
   */
  copyFrom(table: string, columns: string[], rows: string): Promise<void>;
}

export interface SqlDriver extends SqlExecutor {
  readonly backend: "pglite" | "postgres";
  /** Runs `fn` in a transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** SQLSTATE 23505: a unique constraint refused a row. */
export function isUniqueViolation(err: unknown): err is Error & { code: string } {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "23505";
}

/** A value of a COPY text row: null is SQL NULL. */
export type CopyValue = string | number | bigint | null;

/**
 * Rows in COPY's text format: tab-separated, one a line, \N for NULL, a backslash, tab, newline or
 * carriage return in a value escaped (a node's answer is not trusted to hold hex alone).
 */
export function copyText(rows: CopyValue[][]): string {
  let text = "";
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) {
      const value = row[i];
      if (i > 0) text += "\t";
      if (value === null) text += "\\N";
      else if (typeof value !== "string") text += String(value);
      else text += UNSAFE.test(value) ? value.replace(UNSAFE_ALL, (c) => ESCAPES[c]) : value;
    }
    text += "\n";
  }
  return text;
}

const UNSAFE = /[\\\t\n\r]/;
const UNSAFE_ALL = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };
