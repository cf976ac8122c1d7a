import { migrate } from "./migrations";
import { openPgDriver } from "./pg-driver";
import { openPgliteDriver } from "./pglite-driver";
import { SqlUserStore } from "./sql-store";
import type { UserStore } from "./store";

export interface OpenUserStoreOptions {
  /** postgres://… for a PostgreSQL server; unset for embedded PGlite in `dataDir`. */
  databaseUrl?: string;
  /** PGlite's data directory (created if missing); `npm start` passes $DATA_DIR/pglite. */
  dataDir: string;
}

/** Opens the store on PGlite or PostgreSQL and applies pending migrations before returning. */
export async function openUserStore(opts: OpenUserStoreOptions): Promise<UserStore> {
  const driver = opts.databaseUrl ? await openPgDriver(opts.databaseUrl) : await openPgliteDriver(opts.dataDir);
  try {
    await migrate(driver);
  } catch (err) {
    await driver.close().catch(() => {});
    throw err;
  }
  return new SqlUserStore(driver);
}
