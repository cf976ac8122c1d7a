/**
 * What the service prints: connection URLs with their credentials masked in the banner and in
 * every log line, pretty lines on a terminal and JSON elsewhere, and failures that would end the
 * process logged with the id of the request they came from.
 */
import { spawn, spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Writable } from "node:stream";
import { expect } from "chai";
import { credentialFragments, maskUrl } from "../../server/config/credentials";
import { createLogger, wantsPrettyLogs } from "../../server/http/logger";
import { sharedService } from "../api/shared-service";
import { freePort, npmStartCommand, ROOT, ServiceProcess, TEST_API_KEY } from "../api/harness";
import { eventually } from "./processes";

const FIXTURE = path.join(__dirname, "fixtures", "process-fixture.ts");
const PATH_KEY = "AbCdEf0123456789AbCdEf0123456789";
const QUERY_KEY = "ZyXw9876543210zyxwQP";
const DB_PASSWORD = "S3cret-Passw0rd";

/** Runs the fixture in `mode` with `env` as its whole configuration. */
function fixtureArgs(mode: string): string[] {
  const [, ...nodeArgs] = npmStartCommand(); // node's own flags: the TypeScript loader
  return [...nodeArgs.slice(0, -1), FIXTURE, mode];
}

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ["RPC_URL", "DATABASE_URL", "API_KEY", "LOG_FORMAT", "LOG_LEVEL"]) delete env[name];
  return { ...env, ...extra };
}

describe("credentials in connection URLs", function () {
  for (const [url, masked] of [
    // Scheme, host and port only, then /***: no user, password, path, query or fragment (issue 52).
    ["http://127.0.0.1:8545", "http://127.0.0.1:8545/***"],
    [`https://eth-mainnet.g.alchemy.com/v2/${PATH_KEY}`, "https://eth-mainnet.g.alchemy.com/***"],
    ["https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef", "https://mainnet.infura.io/***"],
    ["https://2Ab3Cd4Ef5Gh6Ij7K:0123456789abcdef@mainnet.infura.io/v3/short", "https://mainnet.infura.io/***"],
    ["https://rpc.example/v1/abc123", "https://rpc.example/***"],
    [`https://rpc.example.org/eth?apikey=${QUERY_KEY}&chain=1`, "https://rpc.example.org/***"],
    [`postgres://app:${DB_PASSWORD}@db.internal:5432/nft`, "postgres://db.internal:5432/***"],
    ["wss://user:pw@node.example/ws#frag", "wss://node.example/***"],
    // A host label that looks like a key (16 or more letters and digits) is masked; others are kept.
    ["https://a1b2c3d4e5f6a7b8c9.rpc.example:8443/", "https://***.rpc.example:8443/***"],
    ["https://eth-mainnet-archive.rpc.example/", "https://eth-mainnet-archive.rpc.example/***"],
  ]) {
    it(`are masked for display: ${masked}`, function () {
      expect(maskUrl(url)).to.equal(masked);
    });
  }

  it("are scrubbed from every log line: message, fields, error message and stack", function () {
    const lines: string[] = [];
    const capture = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const rpcUrl = `https://eth.example/v2/${PATH_KEY}?apikey=${QUERY_KEY}`;
    const databaseUrl = `postgres://app:${DB_PASSWORD}@db.internal/nft`;
    const logger = createLogger("info", capture, { secretUrls: [rpcUrl, databaseUrl] });
    const err = new Error(`request to ${rpcUrl} failed; database ${databaseUrl} too`);
    logger.error({ err, rpcUrl, nested: { databaseUrl, quoted: `"${DB_PASSWORD}"` } }, `calling ${rpcUrl}`);
    logger.warn(`an unconfigured URL with a password: https://someone:hunter2hunter2@other.example/?token=abcdef`);
    const text = lines.join("");
    for (const secret of [PATH_KEY, QUERY_KEY, DB_PASSWORD, "hunter2hunter2", "abcdef"])
      expect(text, secret).to.not.include(secret);
    expect(text).to.include("https://eth.example/v2/***?apikey=***");
    expect(text).to.include("postgres://app:***@db.internal/nft");
    expect(text).to.include("https://someone:***@other.example/?token=***");
    expect(lines).to.have.length(2);
    for (const line of lines) expect(() => JSON.parse(line)).to.not.throw();
  });

  it("names the pieces to scrub: password, key-like path segments and long query values, raw and decoded", function () {
    expect(
      credentialFragments(`https://u:p%40ssw0rd!@h/v2/${PATH_KEY}?k=${QUERY_KEY}&sslmode=require`),
    ).to.have.members(["p%40ssw0rd!", "p@ssw0rd!", PATH_KEY, QUERY_KEY]);
  });

  describe("in a running service", function () {
    let service: ServiceProcess;
    let rpcUrl: string;

    before(async function () {
      this.timeout(150_000);
      const { node } = await sharedService();
      // Hardhat's node answers on any path: the "key" travels with every call as a hosted endpoint's would.
      rpcUrl = `${node.rpcUrl}/v2/${PATH_KEY}?apikey=${QUERY_KEY}`;
      service = await ServiceProcess.start({ rpcUrl });
      await eventually("the banner", 30_000, () => /^\s+Store\s/m.test(service.output()));
    });

    after(async function () {
      this.timeout(30_000);
      await service?.stop();
    });

    it("prints RPC_URL masked in the banner and neither key anywhere in its output", async function () {
      await fetch(`${service.url}/health/ready`);
      await fetch(`${service.url}/nope?apikey=${QUERY_KEY}`);
      const output = service.output();
      expect(output).to.match(/^\s+RPC\s+http:\/\/127\.0\.0\.1:\d+\/\*\*\*$/m);
      expect(output).to.not.include(PATH_KEY);
      expect(output).to.not.include(QUERY_KEY);
    });
  });

  describe("when the service cannot start", function () {
    let refusing: Server;
    let refusingUrl: string;

    before(async function () {
      // An endpoint that refuses the key and quotes it back, as hosted RPC providers do.
      refusing = createServer((req, res) => {
        res.statusCode = 401;
        res.end(JSON.stringify({ error: `invalid API key in ${req.url}` }));
      });
      await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
      refusingUrl = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
    });

    after(function () {
      refusing?.close();
    });

    /** npm start's command with `env`, run to its end (asynchronously: the refusing endpoint lives in this process). */
    function start(env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
      const [node, ...args] = npmStartCommand();
      const child = spawn(node, args, {
        cwd: ROOT,
        env: cleanEnv({ API_KEY: TEST_API_KEY, PORT: "0", ...env }),
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      return new Promise((resolve) => child.once("close", (status) => resolve({ status, stdout, stderr })));
    }

    it("prints the RPC endpoint's refusal in one line, the key it quoted masked", async function () {
      this.timeout(60_000);
      const result = await start({ RPC_URL: `${refusingUrl}/v2/${PATH_KEY}?apikey=${QUERY_KEY}` });
      expect(result.status).to.equal(1);
      const lines = result.stderr.split("\n").filter((l) => l.trim() && !/npm warn/i.test(l));
      expect(lines).to.have.length(1);
      expect(lines[0]).to.match(/^Failed to start: server response 401/);
      expect(lines[0]).to.include("/v2/***?apikey=***");
      expect(result.stderr + result.stdout).to.not.include(PATH_KEY);
      expect(result.stderr + result.stdout).to.not.include(QUERY_KEY);
    });

    it("never prints the DATABASE_URL password", async function () {
      this.timeout(60_000);
      const { node } = await sharedService();
      const closedPort = await freePort();
      const result = await start({
        RPC_URL: node.rpcUrl,
        DATABASE_URL: `postgres://app:${DB_PASSWORD}@127.0.0.1:${closedPort}/nft`,
      });
      expect(result.status).to.equal(1);
      expect(result.stderr).to.match(/^Failed to start: /m);
      expect(result.stderr + result.stdout).to.not.include(DB_PASSWORD);
    });
  });
});

describe("log format", function () {
  it("is pretty on a terminal under LOG_FORMAT=auto (the default), JSON otherwise", function () {
    expect(wantsPrettyLogs("auto", true)).to.equal(true);
    expect(wantsPrettyLogs("auto", false)).to.equal(false);
    expect(wantsPrettyLogs("json", true)).to.equal(false);
    expect(wantsPrettyLogs("pretty", false)).to.equal(true);
  });

  const hasScript = spawnSync("script", ["--version"]).status === 0;
  const noScript =
    "util-linux `script` not found: npm test installs it (scripts/ensure-test-tools.sh), or run 'sudo apt-get install bsdutils'";
  const command = (mode: string) => [process.execPath, ...fixtureArgs(mode)].map((a) => `'${a}'`).join(" ");
  // eslint-disable-next-line no-control-regex -- ANSI colour codes
  const stripColors = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "");
  const rpcUrl = `https://eth.example/v2/${PATH_KEY}`;

  it("writes pino-pretty lines when stdout is a terminal (under `script`), credentials scrubbed", function () {
    expect(hasScript, noScript).to.equal(true); // util-linux `script` provides the terminal
    this.timeout(60_000);
    const result = spawnSync("script", ["-qec", command("log"), "/dev/null"], {
      cwd: ROOT,
      env: cleanEnv({ RPC_URL: rpcUrl, API_KEY: TEST_API_KEY }),
      encoding: "utf8",
    });
    const output = stripColors(result.stdout);
    expect(result.status, output).to.equal(0);
    expect(output).to.match(/INFO.*connecting to https:\/\/eth\.example\/v2\/\*\*\*/);
    expect(output).to.not.match(/\{"level":/);
    expect(output).to.not.include(PATH_KEY);
  });

  it("writes JSON lines when stdout is a pipe, and under LOG_FORMAT=json on a terminal", function () {
    this.timeout(60_000);
    const piped = spawnSync(process.execPath, fixtureArgs("log"), {
      cwd: ROOT,
      env: cleanEnv({ RPC_URL: rpcUrl, API_KEY: TEST_API_KEY }),
      encoding: "utf8",
    });
    expect(piped.status, piped.stderr).to.equal(0);
    const line = JSON.parse(piped.stdout.trim()) as { level: number; msg: string; rpcUrl: string };
    expect(line.level).to.equal(30);
    expect(line.rpcUrl).to.equal("https://eth.example/v2/***");
    expect(hasScript, noScript).to.equal(true);
    const onTerminal = spawnSync("script", ["-qec", command("log"), "/dev/null"], {
      cwd: ROOT,
      env: cleanEnv({ RPC_URL: rpcUrl, API_KEY: TEST_API_KEY, LOG_FORMAT: "json" }),
      encoding: "utf8",
    });
    expect(stripColors(onTerminal.stdout)).to.match(/^\{"level":30,/m);
  });
});

describe("failures outside any request handler", function () {
  it("an unhandled rejection is logged at error with the request's id, and the service keeps serving; an uncaught exception is logged at fatal with its request's id, and the process exits 1", async function () {
    this.timeout(60_000);
    const child = spawn(process.execPath, fixtureArgs("app"), {
      cwd: ROOT,
      env: cleanEnv({ LOG_FORMAT: "json" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      await eventually("the fixture listening", 30_000, () => /PORT=\d+/.test(stderr));
      const base = `http://127.0.0.1:${/PORT=(\d+)/.exec(stderr)![1]}`;
      const logLines = () =>
        stdout
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { level: number; msg: string; requestId?: string; err?: { message: string } });

      const rejecting = await fetch(`${base}/reject`);
      expect(rejecting.status).to.equal(200);
      const rejectingId = rejecting.headers.get("x-request-id");
      await eventually("the rejection logged", 10_000, () =>
        logLines().some((l) => l.msg === "unhandled promise rejection"),
      );
      const rejection = logLines().find((l) => l.msg === "unhandled promise rejection")!;
      expect(rejection).to.include({ level: 50, requestId: rejectingId });
      expect(rejection.err?.message).to.equal("a background task failed");
      expect((await fetch(`${base}/reject`)).status, "still serving").to.equal(200);

      const throwing = await fetch(`${base}/throw`);
      const throwingId = throwing.headers.get("x-request-id");
      expect(await exited).to.equal(1);
      const fatal = logLines().find((l) => l.level === 60);
      expect(fatal).to.include({ msg: "uncaught exception: exiting", requestId: throwingId });
      expect(fatal?.err?.message).to.equal("a timer callback threw");
    } finally {
      child.kill("SIGKILL");
    }
  });
});
