/**
 * The master key rotation command: `npm run wallets:rotate-master-key` (in production,
 * `node dist/server/wallets/rotation-command.js`), with the service stopped. It reads the current
 * key from WALLET_MASTER_KEY (else $DATA_DIR/master.key), takes the new one from
 * NEW_WALLET_MASTER_KEY (else makes one), re-seals every local wallet in one transaction of the
 * store (DATABASE_URL, else PGlite in $DATA_DIR), records a master-key.rotated audit event, and
 * writes the new key to $DATA_DIR/master.key (0600) when the old one came from there or the new
 * one was made here. It prints one line; never a key.
 */
import { rm, rename } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { AuditLog } from "../access";
import { ConfigError, loadConfig, masterKeyBytes } from "../config/config";
import { credentialFragments, credentialScrubber } from "../config/credentials";
import { openDatabase } from "../db";
import { MasterKey, masterKeyPath, readMasterKeyFile, writeMasterKeyFile } from "./master-key";
import { MasterKeyError } from "./master-key-check";
import { rotateMasterKey } from "./rotation";

/** Runs the rotation; answers the line to print, or throws an Error whose message is that line. */
export async function rotateFromEnvironment(env: NodeJS.ProcessEnv): Promise<string> {
  const config = loadConfig(env);
  const file = masterKeyPath(config.dataDir);
  const current = config.walletMasterKey ? new MasterKey(config.walletMasterKey) : await readMasterKeyFile(file);
  if (!current) {
    throw new MasterKeyError(
      `WALLET_MASTER_KEY is missing (and there is no ${file}): give the key the wallets are sealed under`,
    );
  }
  let next: MasterKey;
  const given = env.NEW_WALLET_MASTER_KEY?.trim();
  if (given) {
    const bytes = masterKeyBytes(given);
    if (!bytes)
      throw new ConfigError(
        "Invalid configuration: NEW_WALLET_MASTER_KEY must be 32 bytes, as 64 hex characters or base64",
      );
    next = new MasterKey(bytes);
  } else {
    next = MasterKey.generate();
  }
  const writeFile = !config.walletMasterKey || !given;
  // Written before the store changes, so the new key cannot be lost between the commit and the file.
  const staged = `${file}.new`;
  if (writeFile) await writeMasterKeyFile(staged, next);
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: path.join(config.dataDir, "pglite") });
  let wallets: number;
  try {
    wallets = await rotateMasterKey(db, current, next, new AuditLog(db), {
      keyId: null,
      keyName: "wallets:rotate-master-key (command)",
      clientAddress: hostname(),
    });
  } catch (err) {
    if (writeFile) await rm(staged, { force: true });
    throw err;
  } finally {
    await db.close();
  }
  const sealed = `Re-sealed ${wallets} local wallet${wallets === 1 ? "" : "s"} under the new master key`;
  if (!writeFile) return `${sealed} (NEW_WALLET_MASTER_KEY): start the service with WALLET_MASTER_KEY set to it`;
  await rename(staged, file);
  return config.walletMasterKey
    ? `${sealed}, written to ${file} (mode 0600): set WALLET_MASTER_KEY to its content before starting the service`
    : `${sealed}, written to ${file} (mode 0600), where the service reads it`;
}

/** Runs the command: one line on stdout, or one on stderr and exit code 1. */
export function runRotationCommand(env: NodeJS.ProcessEnv = process.env): void {
  rotateFromEnvironment(env).then(
    (line) => console.log(line),
    (err: unknown) => {
      const scrub = credentialScrubber([env.DATABASE_URL].flatMap(credentialFragments));
      console.error(scrub(err instanceof Error ? err.message : String(err)));
      process.exit(1);
    },
  );
}

if (require.main === module) runRotationCommand();
