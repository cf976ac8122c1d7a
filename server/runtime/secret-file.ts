/** Files that hold a secret in the data directory: the master key, the embedded chain's root key. */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";

/** The text of `file`, or null when there is no such file. */
export async function readFileIfAny(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/**
 * Writes `text` to `file`, readable by its owner only (0600): through a temporary file and a
 * rename, so a crash never leaves half a secret behind.
 */
export async function writeSecretFile(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, text, { mode: 0o600, flag: "wx" });
  await rename(temporary, file);
}
