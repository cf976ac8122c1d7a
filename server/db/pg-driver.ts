import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Pool, type PoolClient } from "pg";
import { from as copyFrom } from "pg-copy-streams";
import type { SqlDriver, SqlExecutor } from "./driver";
import { sanitized } from "./errors";

/** A PostgreSQL server through a `pg` connection pool. */
export async function openPgDriver(databaseUrl: string): Promise<SqlDriver> {
  const pool = new Pool({ connectionString: databaseUrl, max: 10 });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  await sanitized(() => pool.query("SELECT 1")); // fail at open, not at the first request, when unreachable
  return {
    backend: "postgres",
    ...executor(pool),
    async transaction(fn) {
      const client = await sanitized(() => pool.connect());
      try {
        await sanitized(() => client.query("BEGIN"));
        const result = await fn(executor(client));
        await sanitized(() => client.query("COMMIT"));
        return result;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

function executor(db: Pool | PoolClient): SqlExecutor {
  return {
    async query<R>(sql: string, params?: unknown[]) {
      const result = await sanitized(() => db.query(sql, params));
      return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length };
    },
    async exec(sql: string) {
      await sanitized(() => db.query(sql)); // no parameters: simple protocol, several statements allowed
    },
    async copyFrom(table: string, columns: string[], rows: string) {
      // COPY FROM STDIN needs one connection: the transaction's, or one taken from the pool for it.
      const client = "release" in db ? db : await sanitized(() => db.connect());
      try {
        const stream = client.query(copyFrom(`COPY ${table} (${columns.join(", ")}) FROM STDIN`));
        await sanitized(() => pipeline(Readable.from([rows]), stream));
      } finally {
        if (client !== db) (client as PoolClient).release();
      }
    },
  };
}
