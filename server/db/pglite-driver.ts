import { mkdir } from "node:fs/promises";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import type { SqlDriver, SqlExecutor } from "./driver";

/** Embedded PostgreSQL (WASM) with its data directory on disk; one connection, queries serialised. */
export async function openPgliteDriver(dataDir: string): Promise<SqlDriver> {
  await mkdir(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir);
  return {
    backend: "pglite",
    ...executor(db),
    transaction: (fn) => db.transaction((tx) => fn(executor(tx))),
    close: () => db.close(),
  };
}

function executor(db: PGlite | Transaction): SqlExecutor {
  return {
    async query<R>(sql: string, params?: unknown[]) {
      const result = await db.query<R>(sql, params);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async exec(sql: string) {
      await db.exec(sql);
    },
  };
}
