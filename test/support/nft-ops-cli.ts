import { spawn } from "node:child_process";
import path from "node:path";
import { ROOT, TEST_API_KEY } from "../api/harness";

export interface CliRun {
  code: number | null;
  /** What it printed, stdout and stderr together. */
  out: string;
}

/** `npx nft-ops ARGS` (bin/nft-ops.js) against the service at `url`, with the tests' root key. */
export function runCli(url: string, args: string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, "bin", "nft-ops.js"), ...args], {
      env: { ...process.env, NFT_OPS_URL: url, NFT_OPS_KEY: TEST_API_KEY },
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, out }));
  });
}
