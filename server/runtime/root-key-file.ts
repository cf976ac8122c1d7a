/**
 * The embedded dev chain's root access key, kept in the data directory beside the master key, so
 * that a restart of `npm start` keeps the key its reader has already exported (API_KEY set wins,
 * and is never written anywhere).
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";

export const ROOT_KEY_FILE = "api.key";

export interface KeptRootKey {
  key: string;
  file: string;
  /** Made by this start (the data directory had none). */
  created: boolean;
}

/** The key in DATA_DIR/api.key, made there (mode 0600, through a rename) when missing or blank. */
export async function keptRootKey(dataDir: string): Promise<KeptRootKey> {
  const file = path.join(dataDir, ROOT_KEY_FILE);
  const kept = await readFile(file, "utf8").then(
    (text) => text.trim(),
    (err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return "";
      throw err;
    },
  );
  if (kept.length >= 16) return { key: kept, file, created: false };
  const key = randomBytes(24).toString("base64url");
  await mkdir(dataDir, { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${key}\n`, { mode: 0o600, flag: "wx" });
  await rename(temporary, file);
  return { key, file, created: true };
}
