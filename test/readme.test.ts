/**
 * The README's examples, run as a reader runs them: every ```sh block, in order, in one bash, against
 * a fresh `npm start` (the embedded chain) with the settings the README asks for. Blocks preceded by
 * `<!-- readme-test: skip -->` (production, another chain, a PKCS#11 token, benchmarks) are left out.
 * Each curl's HTTP status is recorded: none may be 5xx or fail to connect, and a 4xx must be one the
 * README announces in a comment beside the command.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { ROOT, ServiceProcess, TEST_API_KEY, freePort } from "./api/harness";

const SKIP_MARKER = "<!-- readme-test: skip -->";

interface ShellBlock {
  /** The README line (1-based) of the block's first line of code. */
  firstLine: number;
  lines: string[];
}

/** The README's ```sh blocks, but for those the marker skips. */
function runnableBlocks(readme: string[]): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < readme.length; i++) {
    if (readme[i].trim() !== "```sh") continue;
    let before = i - 1;
    while (before >= 0 && readme[before].trim() === "") before--; // prettier puts a blank line between
    const skipped = readme[before]?.trim() === SKIP_MARKER;
    const end = readme.indexOf("```", i + 1);
    if (end < 0) throw new Error(`README line ${i + 1}: a sh block that does not end`);
    if (!skipped) blocks.push({ firstLine: i + 2, lines: readme.slice(i + 1, end) });
    i = end;
  }
  return blocks;
}

/**
 * One bash script of the blocks, stopping at the first command that fails, with `curl` reporting
 * each status and the script line it was called from on stderr; and each script line's README line.
 */
function scriptOf(blocks: ShellBlock[]): { script: string; readmeLine: Map<number, number> } {
  const prelude = [
    "set -eu",
    `curl() { command curl -w "%{stderr}@@status \${BASH_LINENO[0]} %{http_code}\\n" "$@"; }`,
  ];
  const lines = [...prelude];
  const readmeLine = new Map<number, number>();
  for (const block of blocks) {
    block.lines.forEach((line, i) => {
      lines.push(line);
      readmeLine.set(lines.length, block.firstLine + i);
    });
  }
  return { script: `${lines.join("\n")}\n`, readmeLine };
}

function runBash(
  script: string,
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn("bash", ["-c", script], { cwd, env: { ...process.env, ...env }, detached: true });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), timeoutMs);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      // Whatever the script left running (the webhook receiver, if it stopped early).
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // the group is gone
      }
      resolve({ code, stdout, stderr });
    }),
  );
}

describe("README", function () {
  let service: ServiceProcess | undefined;
  let workDir: string;

  before(function () {
    workDir = mkdtempSync(path.join(tmpdir(), "readme-test-"));
  });

  after(async function () {
    this.timeout(30_000);
    await service?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it("its sh examples run in order, as written, on a fresh npm start: no 5xx, and only the 4xx it announces", async function () {
    this.timeout(300_000);
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8").split("\n");
    const blocks = runnableBlocks(readme);
    expect(blocks.length, "runnable sh blocks").to.be.greaterThan(3);
    const { script, readmeLine } = scriptOf(blocks);

    // As the README asks: npm start with WEBHOOK_ALLOW_PRIVATE=true, its PORT, CHAIN_PORT and API_KEY.
    service = await ServiceProcess.start({ env: { API_KEY: TEST_API_KEY, WEBHOOK_ALLOW_PRIVATE: "true" } });
    const run = await runBash(
      script,
      workDir,
      {
        PORT: new URL(service.url).port,
        CHAIN_PORT: String(service.chainPort),
        API_KEY: TEST_API_KEY,
        RECEIVER_PORT: String(await freePort()),
        // The keystore example's `require("ethers")`, from a directory outside the project.
        NODE_PATH: path.join(ROOT, "node_modules"),
      },
      240_000,
    );
    const report = `exit ${run.code}\n--- stderr\n${run.stderr.slice(-4000)}\n--- stdout\n${run.stdout.slice(-4000)}`;
    expect(run.code, report).to.equal(0);

    const statuses = [...run.stderr.matchAll(/^@@status (\d+) (\d{3})$/gm)].map((m) => ({
      line: readmeLine.get(Number(m[1])) ?? 0,
      status: Number(m[2]),
    }));
    expect(statuses.length, "curl calls made").to.be.greaterThan(40);
    for (const { line, status } of statuses) {
      const where = `README line ${line}: ${readme[line - 1]}`;
      expect(status, `${where}\n${report}`).to.be.within(100, 499);
      if (status >= 400) {
        const around = readme.slice(Math.max(0, line - 3), line + 2).join("\n");
        expect(around, `${where} answered ${status}, which the README does not announce`).to.match(
          new RegExp(`#[^\\n]*\\b${status}\\b`),
        );
      }
    }
  });
});
