import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** A throwaway SoftHSM2 token: its own configuration and token directory under the OS temp dir. */
export interface SoftHsmToken {
  /** libsofthsm2.so, the PKCS#11 module to load. */
  modulePath: string;
  tokenLabel: string;
  pin: string;
  soPin: string;
  /**
   * SOFTHSM2_CONF pointing at this token's configuration. SoftHSM2 reads it when the module is
   * initialized, so it must be in the environment of whichever process loads the module: pass it to
   * a child (a service process) or apply it to this one with `useInThisProcess`.
   */
  env: { SOFTHSM2_CONF: string };
  /** The directory SoftHSM2 keeps the token in: moved away, the token is absent. */
  tokenDir: string;
  /** Sets SOFTHSM2_CONF in this process; the returned function puts the previous value back. */
  useInThisProcess(): () => void;
  /** Deletes the token directory. */
  remove(): void;
}

const MODULE_CANDIDATES = ["/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so"];

/** Where Debian's softhsm2 put its PKCS#11 module (scripts/ensure-test-tools.sh installs it). */
export function softHsmModulePath(): string {
  const known = MODULE_CANDIDATES.find((candidate) => existsSync(candidate));
  if (known) return known;
  try {
    const listed = execFileSync("dpkg", ["-L", "libsofthsm2"], { encoding: "utf8" })
      .split("\n")
      .find((file) => file.endsWith("/libsofthsm2.so") && existsSync(file));
    if (listed) return listed;
  } catch {
    // dpkg missing or the package is not installed: the message below says what to do.
  }
  throw new Error(
    "libsofthsm2.so not found: run 'bash scripts/ensure-test-tools.sh' (or 'sudo apt-get install softhsm2')",
  );
}

/** Initializes a fresh token labelled `tokenLabel` in a new temp directory with `softhsm2-util`. */
export function createSoftHsmToken({
  tokenLabel = "nft-test",
  pin = "1234-test-pin",
  soPin = "5678-test-so-pin",
}: { tokenLabel?: string; pin?: string; soPin?: string } = {}): SoftHsmToken {
  const modulePath = softHsmModulePath();
  const dir = mkdtempSync(path.join(tmpdir(), "nft-softhsm-"));
  const tokenDir = path.join(dir, "tokens");
  mkdirSync(tokenDir);
  const conf = path.join(dir, "softhsm2.conf");
  writeFileSync(
    conf,
    [
      `directories.tokendir = ${tokenDir}`,
      "objectstore.backend = file",
      "log.level = ERROR",
      "slots.removable = false",
      "",
    ].join("\n"),
  );
  const env = { SOFTHSM2_CONF: conf };
  execFileSync(
    "softhsm2-util",
    ["--init-token", "--free", "--label", tokenLabel, "--pin", pin, "--so-pin", soPin, "--module", modulePath],
    { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] },
  );
  return {
    modulePath,
    tokenLabel,
    pin,
    soPin,
    env,
    tokenDir,
    useInThisProcess() {
      const previous = process.env.SOFTHSM2_CONF;
      process.env.SOFTHSM2_CONF = conf;
      return () => {
        if (previous === undefined) delete process.env.SOFTHSM2_CONF;
        else process.env.SOFTHSM2_CONF = previous;
      };
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
