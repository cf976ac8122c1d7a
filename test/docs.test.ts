/**
 * The docs' examples, run as a reader runs them: every ```sh block of README.md and then of each
 * guide in docs/, in the order the README's table of guides lists them, in one bash, against one
 * fresh `npm start` (the embedded chain) with the settings the README asks for. The pages share the
 * service and the shell: a guide continues from the README's first steps (its variables, the wallet
 * `treasury` of the wallets guide). A block preceded by `<!-- readme-test: skip: REASON -->` (the
 * production entry, another chain, a PKCS#11 token, benchmarks) is left out, and must say why.
 * Each curl's HTTP status is recorded: none may be 5xx or fail to connect, and a 4xx must be one the
 * page announces in a comment beside the command.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet } from "ethers";
import { ROOT, ServiceProcess, TEST_API_KEY, freePort } from "./api/harness";

const SKIP_MARKER = /^<!-- readme-test: skip(?::\s*(.*?))?\s*-->$/;

interface Page {
  /** Relative to the repository: README.md, docs/NAME.md. */
  file: string;
  lines: string[];
}

interface ShellBlock {
  file: string;
  /** The page line (1-based) of the block's first line of code. */
  firstLine: number;
  lines: string[];
}

function readPage(file: string): Page {
  return { file, lines: readFileSync(path.join(ROOT, file), "utf8").split("\n") };
}

/** README.md, then the guides in the order of the README's table (rows starting `| [`). */
function pagesInOrder(): Page[] {
  const readme = readPage("README.md");
  const guides = readme.lines
    .filter((line) => line.startsWith("| ["))
    .map((line) => /\]\((docs\/[\w-]+\.md)\)/.exec(line)?.[1])
    .filter((file): file is string => file !== undefined);
  return [readme, ...guides.map(readPage)];
}

/** A page's ```sh blocks, but for those the marker skips; a skip without its reason throws. */
function runnableBlocks(page: Page): ShellBlock[] {
  const { file, lines } = page;
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== "```sh") continue;
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === "") before--; // prettier puts a blank line between
    const marker = SKIP_MARKER.exec(lines[before]?.trim() ?? "");
    if (marker && !marker[1]) throw new Error(`${file} line ${before + 1}: a skip marker must say why`);
    const end = lines.indexOf("```", i + 1);
    if (end < 0) throw new Error(`${file} line ${i + 1}: a sh block that does not end`);
    if (!marker) blocks.push({ file, firstLine: i + 2, lines: lines.slice(i + 1, end) });
    i = end;
  }
  return blocks;
}

interface Origin {
  file: string;
  line: number;
}

/**
 * One bash script of the blocks, stopping at the first command that fails, with `curl` reporting
 * each status and the script line it was called from on stderr, and a mark at each page's start
 * (for its duration); and each script line's page and line.
 */
function scriptOf(blocks: ShellBlock[]): { script: string; origin: Map<number, Origin> } {
  // A newline after each answer, as README's own `curl` function adds (a block the test skips).
  const lines = [
    "set -eu",
    `curl() { command curl -w "\\n%{stderr}@@status \${BASH_LINENO[0]} %{http_code}\\n" "$@"; }`,
  ];
  const origin = new Map<number, Origin>();
  let page = "";
  for (const block of blocks) {
    if (block.file !== page) {
      page = block.file;
      lines.push(`echo "@@page ${page} $(date +%s%3N)" >&2`);
    }
    block.lines.forEach((line, i) => {
      lines.push(line);
      origin.set(lines.length, { file: block.file, line: block.firstLine + i });
    });
  }
  lines.push(`echo "@@page end $(date +%s%3N)" >&2`);
  return { script: `${lines.join("\n")}\n`, origin };
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

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .replace(/^#+\s*/, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

describe("the docs (README.md and docs/)", function () {
  let service: ServiceProcess | undefined;
  let workDir: string;

  before(function () {
    workDir = mkdtempSync(path.join(tmpdir(), "docs-test-"));
  });

  after(async function () {
    this.timeout(30_000);
    await service?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it("the README's table lists every guide in docs/, and every link between pages resolves", function () {
    const pages = pagesInOrder();
    const listed = pages.slice(1).map((p) => p.file);
    const present = readdirSync(path.join(ROOT, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`);
    expect([...listed].sort()).to.deep.equal(present.sort());
    const readme = pages[0].lines;
    expect(readme.length, "README.md lines").to.be.at.most(160);

    for (const page of pages) {
      page.lines.forEach((line, i) => {
        for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          if (/^[a-z]+:/.test(target)) continue; // http(s), mailto
          const [file, anchor] = target.split("#");
          const resolved = file ? path.join(path.dirname(page.file), file) : page.file;
          const where = `${page.file} line ${i + 1}: ${target}`;
          expect(existsSync(path.join(ROOT, resolved)), where).to.equal(true);
          if (anchor && resolved.endsWith(".md")) {
            const anchors = readFileSync(path.join(ROOT, resolved), "utf8")
              .split("\n")
              .filter((l) => /^#{1,6} /.test(l))
              .map(anchorOf);
            expect(anchors, where).to.include(anchor);
          }
        }
      });
    }
  });

  it("no user-facing file names a path outside the repository (../shared): the project's own docs instead", function () {
    // Read from the tree, not from git: CI's second runtime runs in a copy of the tree with no .git.
    const tracked = ["README.md", "docs", "server", "console", "bin"]
      .flatMap((entry) =>
        statSync(path.join(ROOT, entry)).isDirectory()
          ? readdirSync(path.join(ROOT, entry), { recursive: true, encoding: "utf8" }).map((f) => path.join(entry, f))
          : [entry],
      )
      .filter((file) => !file.endsWith(".png") && statSync(path.join(ROOT, file)).isFile());
    expect(tracked.length, "tracked files read").to.be.greaterThan(100);
    const citing = tracked.filter((file) => readFileSync(path.join(ROOT, file), "utf8").includes("../shared"));
    expect(citing, "files that cite ../shared").to.deep.equal([]);
  });

  it("docs/configuration.md names every environment variable server/config reads", function () {
    const source = readFileSync(path.join(ROOT, "server", "config", "config.ts"), "utf8");
    const schema = source.slice(source.indexOf("const EnvSchema"), source.indexOf(".superRefine"));
    const variables = [...schema.matchAll(/^\s{4}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]);
    expect(variables.length, "variables found in EnvSchema").to.be.greaterThan(30);
    const table = readFileSync(path.join(ROOT, "docs", "configuration.md"), "utf8");
    const missing = variables.filter((name) => !table.includes(`| \`${name}\``));
    expect(missing, "variables with no row in docs/configuration.md").to.deep.equal([]);
  });

  it("their sh examples run in order, as written, on a fresh npm start: no 5xx, and only the 4xx each announces", async function () {
    this.timeout(420_000);
    const pages = pagesInOrder();
    const blocks = pages.flatMap(runnableBlocks);
    expect(blocks.length, "runnable sh blocks").to.be.greaterThan(10);
    const { script, origin } = scriptOf(blocks);
    const lineOf = (o: Origin) => pages.find((p) => p.file === o.file)?.lines ?? [];

    // As the README asks: npm start (the webhooks guide's local receiver needs nothing more), its PORT, CHAIN_PORT and API_KEY.
    const started = Date.now();
    service = await ServiceProcess.start({ env: { API_KEY: TEST_API_KEY } });
    // A reader starts once the banner is out: by then the embedded chain has deployed the collection
    // and TUSD (docs/checkout.md takes TUSD's address from it), before any request of the guides.
    await service.waitForOutput(/^\s*TUSD\s+0x/m, 60_000);
    const startMs = Date.now() - started;
    const run = await runBash(
      script,
      workDir,
      {
        PORT: new URL(service.url).port,
        CHAIN_PORT: String(service.chainPort),
        API_KEY: TEST_API_KEY,
        RECEIVER_PORT: String(await freePort()),
        // The examples' `require("ethers")`, from a directory outside the project.
        NODE_PATH: path.join(ROOT, "node_modules"),
      },
      360_000,
    );
    const report = `exit ${run.code}\n--- stderr\n${run.stderr.slice(-4000)}\n--- stdout\n${run.stdout.slice(-4000)}`;

    // How long each page's examples took, for the CI log (the test runs on every CI runtime).
    const marks = [...run.stderr.matchAll(/^@@page (\S+) (\d+)$/gm)].map((m) => ({ page: m[1], at: Number(m[2]) }));
    const durations = marks.slice(0, -1).map((m, i) => `${m.page} ${((marks[i + 1].at - m.at) / 1000).toFixed(1)} s`);
    console.log(`      service start ${(startMs / 1000).toFixed(1)} s; ${durations.join(", ")}`);

    expect(run.code, report).to.equal(0);
    // The files the guides write (CSV, keystore, metadata) go to README's $WORK, not the reader's directory.
    expect(readdirSync(workDir), "files the examples left in the working directory").to.deep.equal([]);
    const statuses = [...run.stderr.matchAll(/^@@status (\d+) (\d{3})$/gm)].map((m) => ({
      origin: origin.get(Number(m[1])) ?? { file: "?", line: 0 },
      status: Number(m[2]),
    }));
    expect(statuses.length, "curl calls made").to.be.greaterThan(60);
    for (const { origin: o, status } of statuses) {
      const lines = lineOf(o);
      const where = `${o.file} line ${o.line}: ${lines[o.line - 1]}`;
      expect(status, `${where}\n${report}`).to.be.within(100, 499);
      if (status >= 400) {
        const around = lines.slice(Math.max(0, o.line - 3), o.line + 2).join("\n");
        expect(around, `${where} answered ${status}, which the page does not announce`).to.match(
          new RegExp(`#[^\\n]*\\b${status}\\b`),
        );
      }
    }
  });

  it("a failing step stops the page there with its own error: README's deploy by an unfunded key shows its 402, nothing after", async function () {
    this.timeout(120_000);
    expect(service, "the service the examples ran on").to.not.equal(undefined);
    const readme = pagesInOrder()[0];
    const { script, origin } = scriptOf(runnableBlocks(readme));
    const unfunded = Wallet.createRandom().privateKey;
    expect(script, "README's KEY line").to.match(/^KEY=0x[0-9a-f]{64}$/m);
    const run = await runBash(
      script.replace(/^KEY=0x[0-9a-f]{64}$/m, `KEY=${unfunded}`),
      workDir,
      { PORT: new URL(service!.url).port, CHAIN_PORT: String(service!.chainPort), API_KEY: TEST_API_KEY },
      60_000,
    );
    const report = `exit ${run.code}\n--- stderr\n${run.stderr}\n--- stdout\n${run.stdout}`;
    expect(run.code, report).to.not.equal(0);
    const statuses = [...run.stderr.matchAll(/^@@status (\d+) (\d{3})$/gm)];
    expect(statuses.length, `one call made: ${report}`).to.equal(1);
    const step = origin.get(Number(statuses[0][1]));
    const line = step?.line ?? 0;
    expect(readme.lines.slice(Math.max(0, line - 2), line).join("\n"), report).to.match(
      /DROP=\$\(curl .*\/nft\/deploy/,
    );
    expect(statuses[0][2], report).to.equal("402");
    expect(run.stderr, report).to.include('"code":"INSUFFICIENT_FUNDS"');
    expect(`${run.stdout}${run.stderr}`, report).to.not.match(/VALIDATION_ERROR|null/);
  });
});
