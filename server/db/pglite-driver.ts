import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import type { SqlDriver, SqlExecutor } from "./driver";
import { sanitized } from "./errors";

/**
 * PostgreSQL's memory settings inside PGlite, whose WASM memory grows and never shrinks (bench/memory.ts).
 * shared_buffers (128 MB by default) is all touched at start: 16 MB holds the service's hot pages, the
 * rest of its files stay in the OS's page cache. maintenance_work_mem (64 MB) is what one CREATE INDEX
 * or VACUUM may grow the memory by for good. work_mem stays at its 4 MB. wal_init_zero off: a new
 * 16 MB WAL segment is not first filled with zeros, 2,048 writes through the WASM file system each
 * (a fresh store's first 100,000 indexed logs create about 15; recycled ones are not zeroed anyway).
 */
export const PGLITE_SETTINGS = { shared_buffers: "16MB", maintenance_work_mem: "16MB", wal_init_zero: "off" };

/** Embedded PostgreSQL (WASM) with its data directory on disk; one connection, queries serialised. */
export async function openPgliteDriver(dataDir: string): Promise<SqlDriver> {
  await mkdir(dataDir, { recursive: true });
  const fresh = !existsSync(path.join(dataDir, "PG_VERSION"));
  const db = await PGlite.create(dataDir, {
    startParams: [
      ...PGlite.defaultStartParams,
      ...Object.entries(PGLITE_SETTINGS).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
    ],
  });
  // A first start ran initdb in a WASM instance of its own: about 450 MB of buffers, garbage now,
  // that an idle process would keep (V8 sees no pressure on its heap). Collected once, here.
  if (fresh) await collectGarbage();
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
    async copyFrom(table: string, columns: string[], rows: string) {
      // PGlite reads a query's blob as the file /dev/blob: one copy, not a protocol message built in JS.
      await sanitized(() =>
        db.query(`COPY ${table} (${columns.join(", ")}) FROM '/dev/blob'`, [], { blob: new Blob([rows]) }),
      );
    },
  };
}

/**
 * Full garbage collections, with or without node's --expose-gc: a second one, a turn of the event
 * loop later, frees what the first only finalised (the WASM instance's memory is held by its module
 * until then).
 */
async function collectGarbage(): Promise<void> {
  let gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as () => void;
  }
  gc();
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc();
}
