import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { SqlExecutor } from "./driver";

/** Where the SQL functions and triggers live: one file each, declared with CREATE OR REPLACE. */
export const FUNCTIONS_DIR = path.join(__dirname, "functions");

/** The files in name order, with their checksums. */
export function functionFiles(dir = FUNCTIONS_DIR): { name: string; sql: string; checksum: string }[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".sql"))
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/**
 * Applies the function files after the versioned migrations, as Flyway applies its repeatable
 * ones: a file whose checksum is the one recorded is skipped, unless a migration ran just before
 * (it may have dropped what the file declares). Tables stay in migrations; a rule changes in its file.
 * Bodies are checked when called, not when declared, so files may call each other in any order.
 */
export async function applyFunctions(tx: SqlExecutor, migrated: boolean): Promise<string[]> {
  await tx.exec(`CREATE TABLE IF NOT EXISTS schema_functions (
    name       text PRIMARY KEY,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const { rows } = await tx.query<{ name: string; checksum: string }>("SELECT name, checksum FROM schema_functions");
  await tx.exec("SET LOCAL check_function_bodies = off");
  const recorded = new Map(rows.map((row) => [row.name, row.checksum]));
  const applied: string[] = [];
  for (const file of functionFiles()) {
    if (!migrated && recorded.get(file.name) === file.checksum) continue;
    await tx.exec(file.sql);
    await tx.query(
      `INSERT INTO schema_functions (name, checksum) VALUES ($1, $2)
       ON CONFLICT (name) DO UPDATE SET checksum = $2, applied_at = now()`,
      [file.name, file.checksum],
    );
    applied.push(file.name);
  }
  return applied;
}
