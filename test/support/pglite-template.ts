/**
 * A PGlite store with every migration applied, made once per test run by the service's own
 * `openDatabase`, and copied wherever a test needs a fresh store: a fresh PGlite's initdb and the
 * migrations take 3 to 7 s on these machines, a copy a fifth of a second. Tests of a fresh store's
 * own path (the migrations from an old schema, npm start's first run) make theirs from nothing.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openDatabase } from "../../server/db";

let template: Promise<string> | undefined;

async function makeTemplate(): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "pglite-template-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  const db = await openDatabase({ dataDir: dir });
  await db.close();
  return dir;
}

/** Fills `dir` (PGlite's data directory, created if missing) with a migrated, empty store. */
export async function seedPglite(dir: string): Promise<string> {
  cpSync(await (template ??= makeTemplate()), dir, { recursive: true });
  return dir;
}

/** A new temporary DATA_DIR for the service, its PGlite store already migrated. */
export async function seededDataDir(prefix: string): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  await seedPglite(path.join(dir, "pglite"));
  return dir;
}
