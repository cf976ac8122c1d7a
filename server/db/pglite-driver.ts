import { mkdir } from "node:fs/promises";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import type { SqlDriver, SqlExecutor } from "./driver";
import { sanitized } from "./errors";

/** Embedded PostgreSQL (WASM) with its data directory on disk; one connection, queries serialised. */
export async function openPgliteDriver(dataDir: string): Promise<SqlDriver> {
  await mkdir(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir);
  return {
    backend: "pglite",
    ...executor(db),
    // Errors thrown by `fn` pass through unchanged; BEGIN/COMMIT failures come out sanitized.
    transaction: (fn) => sanitized(() => db.transaction((tx) => fn(executor(tx)))),
    close: () => db.close(),
  };
}

function executor(db: PGlite | Transaction): SqlExecutor {
  return {
    async query<R>(sql: string, params?: unknown[]) {
      const result = await sanitized(() => db.query<R>(sql, params));
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async exec(sql: string) {
      await sanitized(() => db.exec(sql));
    },
  };
}
