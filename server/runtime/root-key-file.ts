/**
 * The embedded dev chain's root access key, kept in the data directory beside the master key, so
 * that a restart of `npm start` keeps the key its reader has already exported (API_KEY set wins,
 * and is never written anywhere).
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { readFileIfAny, writeSecretFile } from "./secret-file";

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
  const kept = ((await readFileIfAny(file)) ?? "").trim();
  if (kept.length >= 16) return { key: kept, file, created: false };
  const key = randomBytes(24).toString("base64url");
  await writeSecretFile(file, `${key}\n`);
  return { key, file, created: true };
}
