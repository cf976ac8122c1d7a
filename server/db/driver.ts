/** The little of SQL access the service needs, so PGlite and `pg` look the same to it. */
export interface SqlExecutor {
  /** One statement with $n parameters. */
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: R[]; rowCount: number }>;
  /** A script of statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
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
