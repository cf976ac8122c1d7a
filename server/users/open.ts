import { openDatabase, type OpenDatabaseOptions } from "../db";
import { SqlUserStore } from "./sql-store";
import type { UserStore } from "./store";

export type OpenUserStoreOptions = OpenDatabaseOptions;

/** A user store on a database of its own (tests, benches); closing the store closes it. */
export async function openUserStore(opts: OpenUserStoreOptions): Promise<UserStore> {
  return new SqlUserStore(await openDatabase(opts), { ownsDatabase: true });
}
