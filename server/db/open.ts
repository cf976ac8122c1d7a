import type { SqlDriver } from "./driver";
import { migrate } from "./migrations";
import { openPgDriver } from "./pg-driver";
import { openPgliteDriver } from "./pglite-driver";

export interface OpenDatabaseOptions {
  /** postgres://… for a PostgreSQL server; unset for embedded PGlite in `dataDir`. */
  databaseUrl?: string;
  /** PGlite's data directory (created if missing); `npm start` passes $DATA_DIR/pglite. */
  dataDir: string;
}

/** Opens the service's one SQL store (PGlite or PostgreSQL) with every migration applied. */
export async function openDatabase(opts: OpenDatabaseOptions): Promise<SqlDriver> {
  const driver = opts.databaseUrl ? await openPgDriver(opts.databaseUrl) : await openPgliteDriver(opts.dataDir);
  try {
    await migrate(driver);
  } catch (err) {
    await driver.close().catch(() => {});
    throw err;
  }
  return driver;
}
