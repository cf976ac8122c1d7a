/**
 * Starts the service the way a user does: a `hardhat node` child process, the collection deployed
 * with `scripts/deploy.ts`, and the service started by `npm start`'s command (one Node process)
 * pointed at the node. Every child is killed by its process-group id in `stop()`, and on process
 * exit as a last resort.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { Contract, FetchRequest, JsonRpcProvider, Wallet } from "ethers";
import { freePort } from "../support/free-port";
import { checkAnswer } from "../support/openapi-answers";
import { seedPglite } from "../support/pglite-template";
import { beforeKill, trackChild, type ChildKind } from "../support/start-log";
import {
  collectionInterface,
  DEFAULT_COLLECTION,
  deployTransaction,
  type CollectionParams,
} from "../../server/chain/collection";

export { freePort };

export const ROOT = path.resolve(__dirname, "..", "..");
const HARDHAT = path.join(ROOT, "node_modules", ".bin", "hardhat");
const ANVIL = path.join(ROOT, "node_modules", ".bin", "anvil");

/**
 * `npm start`'s command line from package.json, run without npm in between: `node` and its
 * arguments (the script `exec`s node, so that under npm too the service is npm's only child).
 *
 * Under `npm test` (package.json sets TEST_SERVICE_LIFTOFF_ONLY=1) node also gets V8's
 * --liftoff-only: PGlite's WebAssembly is compiled by V8's baseline compiler alone, never
 * optimised. The same code runs; the suite starts services a few hundred times, and the optimising
 * tier cost about 3.5 of the 7 CPU-seconds of a start and its first seconds (3.8 against 7.2 at
 * load 4), more than it saves in a test's short life. `npm start` and the benches keep V8's default.
 */
export function npmStartCommand(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } };
  const [command, ...args] = pkg.scripts.start.replace(/^exec\s+/, "").split(/\s+/);
  if (command !== "node") throw new Error(`npm start is no longer a plain node command: ${pkg.scripts.start}`);
  const testFlags = process.env.TEST_SERVICE_LIFTOFF_ONLY === "1" ? ["--liftoff-only"] : [];
  return [process.execPath, ...testFlags, ...args];
}

/** Hardhat's well-known dev accounts: public keys of a public mnemonic, for local chains only. */
export const DEV_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
  "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
  "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
  "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
  "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
  "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
] as const;

/** A fixed API key for the services the tests start (32 characters). */
export const TEST_API_KEY = "test-api-key-0123456789abcdefghi";

/** Every secret a test hands to the service; none may come back in a response or a log line. */
export const usedSecrets = new Set<string>([...DEV_KEYS, TEST_API_KEY]);

/** A fresh key with no ether, remembered for the secret scan. */
export function freshWallet(): Wallet {
  const wallet = Wallet.createRandom();
  usedSecrets.add(wallet.privateKey);
  return new Wallet(wallet.privateKey);
}

/**
 * A fresh key holding `balance` wei (100 ether by default) on the node behind `provider`, set with
 * hardhat_setBalance: no transaction, so no other key's nonce moves. Remembered for the secret scan.
 */
export async function fundedWallet(provider: JsonRpcProvider, balance = 100n * 10n ** 18n): Promise<Wallet> {
  const wallet = freshWallet();
  await provider.send("hardhat_setBalance", [wallet.address, `0x${balance.toString(16)}`]);
  return wallet;
}

const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of children) killGroup(child, "SIGKILL");
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  beforeKill(child);
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** SIGKILL to the child's process group, resolved once it has exited. */
async function killNow(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  killGroup(child, "SIGKILL");
  await exited;
}

async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    children.delete(child);
    return;
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  killGroup(child, "SIGTERM");
  const timer = setTimeout(() => killGroup(child, "SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
  children.delete(child);
}

interface Spawned {
  child: ChildProcess;
  output(): string;
}

function spawnHardhat(args: string[], env: NodeJS.ProcessEnv, stdout: "pipe" | "ignore" = "pipe"): Spawned {
  return spawnChild(args[0] === "node" ? "hardhat node" : "hardhat script", HARDHAT, args, env, stdout, ROOT);
}

function spawnChild(
  kind: ChildKind,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  stdout: "pipe" | "ignore",
  cwd: string,
): Spawned {
  // Its own process group, so that stopping it also stops anything it started.
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", stdout, "pipe"] });
  children.add(child);
  child.once("exit", () => children.delete(child));
  trackChild(kind, child);
  let output = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  return { child, output: () => output };
}

/** The environment of a child: ours, minus anything that would point hardhat or the service elsewhere. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (
      /^(RPC_URL|CHAINS|HARDHAT_CHAIN_ID|LOCALHOST_RPC_URL|CONTRACT_ADDRESS|API_KEY|DATABASE_URL|DEMO_PORT|PORT|CHAIN_PORT|HOST|LOG_FORMAT|SHUTDOWN_TIMEOUT_MS|REQUEST_TIMEOUT_MS|HEADERS_TIMEOUT_MS|TRUST_PROXY|NFT_.*|(NEW_)?WALLET_MASTER_KEY|PKCS11_.*|SOFTHSM2_CONF)$/.test(
        name,
      )
    ) {
      delete env[name];
    }
  }
  return { ...env, ...extra };
}

async function waitFor<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined> | T | undefined,
  spawned?: Spawned,
  /** What the last probe got, for the error when the time is up. */
  lastProbe?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (spawned && (spawned.child.exitCode !== null || spawned.child.signalCode !== null)) {
      throw new Error(
        `${what}: the process exited (${spawned.child.exitCode ?? spawned.child.signalCode}):\n${spawned.output()}`,
      );
    }
    if (Date.now() > deadline) {
      const last = lastProbe ? `\n${lastProbe()}` : "";
      throw new Error(`${what}: not ready after ${timeoutMs} ms:\n${spawned?.output() ?? ""}${last}`);
    }
    await sleep(100);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A `hardhat node` child process serving JSON-RPC on 127.0.0.1:port. */
export class ChainNode {
  private constructor(
    readonly port: number,
    private readonly spawned: Spawned,
  ) {}

  get rpcUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A node on `port` (a free one when unset) with chain id `chainId` (Hardhat's 31337 when unset). */
  static async start(port?: number, chainId?: number): Promise<ChainNode> {
    const chosen = port ?? (await freePort());
    const spawned = spawnHardhat(
      ["node", "--hostname", "127.0.0.1", "--port", String(chosen)],
      childEnv(chainId === undefined ? {} : { HARDHAT_CHAIN_ID: String(chainId) }),
    );
    await waitFor(
      "hardhat node",
      60_000,
      () => (spawned.output().includes("Started HTTP and WebSocket JSON-RPC server") ? true : undefined),
      spawned,
    );
    return new ChainNode(chosen, spawned);
  }

  /** The node's process group: SIGSTOP hangs it (a node that takes connections and never answers), SIGCONT resumes it. */
  signal(signal: NodeJS.Signals): void {
    process.kill(-this.spawned.child.pid!, signal);
  }

  /** Whether the node still runs, and the end of what it printed: for a failing test's message. */
  describeState(tail = 2000): string {
    const { exitCode, signalCode } = this.spawned.child;
    const state = exitCode === null && signalCode === null ? "running" : `exited (${exitCode ?? signalCode})`;
    return `hardhat node on ${this.port}: ${state}; its last output:\n${this.spawned.output().slice(-tail)}`;
  }

  /** Kills the node outright, the way a crash would. */
  kill(): Promise<void> {
    return killNow(this.spawned.child);
  }

  stop(): Promise<void> {
    return stopChild(this.spawned.child);
  }
}

/**
 * Foundry's anvil (the npm package @foundry-rs/anvil) serving JSON-RPC on 127.0.0.1:port: another
 * node than Hardhat's, with its own error shapes and eth_getBlockReceipts. It automines, and its
 * accounts are Hardhat's (the same mnemonic); it answers hardhat_setBalance too.
 */
export class AnvilNode {
  private constructor(
    readonly port: number,
    private readonly spawned: Spawned,
  ) {}

  get rpcUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A node on a free port with chain id `chainId` (31337, Hardhat's, when unset); `args` are anvil's own (`--block-time 1`). */
  static async start(chainId = 31337, args: string[] = []): Promise<AnvilNode> {
    const port = await freePort();
    const spawned = spawnChild(
      "anvil node",
      ANVIL,
      ["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(chainId), ...args],
      childEnv({}),
      "pipe",
      ROOT,
    );
    await waitFor("anvil", 30_000, () => (spawned.output().includes("Listening on") ? true : undefined), spawned);
    return new AnvilNode(port, spawned);
  }

  stop(): Promise<void> {
    return stopChild(this.spawned.child);
  }
}

export interface CollectionEnv {
  NFT_COST?: string;
  NFT_MAX_SUPPLY?: string;
  NFT_MAX_MINT_PER_TX?: string;
  NFT_BASE_URI?: string;
}

/** Runs `scripts/deploy.ts --network localhost` against `rpcUrl` and returns the address it prints. */
export async function deployWithScript(rpcUrl: string, params: CollectionEnv = {}): Promise<string> {
  const spawned = spawnHardhat(
    ["run", "--no-compile", "scripts/deploy.ts", "--network", "localhost"],
    childEnv({ LOCALHOST_RPC_URL: rpcUrl, ...(params as Record<string, string>) }),
  );
  const code = await new Promise<number | null>((resolve) => spawned.child.once("exit", (c) => resolve(c)));
  const match = /NFTCollection deployed to (0x[0-9a-fA-F]{40}) on localhost/.exec(spawned.output());
  if (code !== 0 || !match) throw new Error(`deploy script failed (exit ${code}):\n${spawned.output()}`);
  return match[1];
}

export interface ServiceOptions {
  /** The chain to connect to; unset starts the embedded chain, as `npm start` does with no configuration. */
  rpcUrl?: string;
  /** Several chains (CHAINS), instead of rpcUrl: each its id, name and URLs. */
  chains?: { id: number; name?: string; rpcUrls: string[]; wsUrl?: string }[];
  env?: Record<string, string>;
  /** "ignore" sends stdout (the banner and the request logs) nowhere, as a log file would take them. */
  stdout?: "pipe" | "ignore";
  /** The command that starts the service, run in `cwd`; default: npm start's command in the project. */
  entry?: { command: string; args: string[]; cwd: string };
}

/** npm start's command (or `entry`) connected to a node (or on its embedded chain), with its own port and a fresh DATA_DIR. */
export class ServiceProcess {
  private constructor(
    readonly url: string,
    private readonly spawned: Spawned,
    private readonly dataDir: string,
    /** Where the embedded chain's JSON-RPC is served (embedded mode only). */
    readonly chainPort?: number,
  ) {}

  static async start({ rpcUrl, chains, env = {}, stdout = "pipe", entry }: ServiceOptions): Promise<ServiceProcess> {
    const port = await freePort();
    const dataDir = mkdtempSync(path.join(tmpdir(), "nft-api-test-"));
    // A test's own DATA_DIR or DATABASE_URL is its own affair; the default starts on a migrated store.
    if (!env.DATA_DIR && !env.DATABASE_URL) await seedPglite(path.join(dataDir, "pglite"));
    const chainPort = rpcUrl || chains ? undefined : await freePort();
    // RPC_TIMEOUT_MS' 5 s default is short for a hardhat node on a machine under the whole suite's load:
    // a 1,000-recipient airdrop's estimates passed 10 s there. Tests of a timeout set their own.
    const chain: Record<string, string> = chains
      ? { CHAINS: JSON.stringify(chains), API_KEY: TEST_API_KEY, RPC_TIMEOUT_MS: "30000" }
      : rpcUrl
        ? { RPC_URL: rpcUrl, API_KEY: TEST_API_KEY, RPC_TIMEOUT_MS: "30000" }
        : { CHAIN_PORT: String(chainPort) };
    const [command, ...args] = entry ? [entry.command, ...entry.args] : npmStartCommand();
    const spawned = spawnChild(
      "service",
      command,
      args,
      childEnv({
        ...chain,
        PORT: String(port),
        HOST: "127.0.0.1",
        DATA_DIR: dataDir,
        LOG_LEVEL: "info",
        ...env,
      }),
      stdout,
      entry?.cwd ?? ROOT,
    );
    const url = `http://127.0.0.1:${port}`;
    // What the last probe got, for the error when the service never gets ready: its answer, or why none.
    let last = "no probe yet";
    const ready = waitFor(
      "service",
      90_000,
      async () => {
        try {
          const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) });
          if (res.status === 200) return true;
          last = `${res.status} ${(await res.text()).slice(0, 300)}`;
        } catch (err) {
          const { message, cause } = err as Error & { cause?: { code?: string; message?: string } };
          last = `${message}${cause ? ` (${cause.code ?? cause.message})` : ""}`;
        }
        return undefined;
      },
      spawned,
      () => `The last GET ${url}/health: ${last}`,
    );
    try {
      await ready;
    } catch (err) {
      await stopChild(spawned.child);
      rmSync(dataDir, { recursive: true, force: true });
      throw err;
    }
    return new ServiceProcess(url, spawned, dataDir, chainPort);
  }

  /** Everything the service printed on stdout and stderr (banner and pino JSON lines). */
  output(): string {
    return this.spawned.output();
  }

  /** Waits until the service has printed a line matching `pattern` (an error if it exits first, or after `timeoutMs`). */
  async waitForOutput(pattern: RegExp, timeoutMs: number): Promise<void> {
    await waitFor(
      `service output ${pattern}`,
      timeoutMs,
      () => (pattern.test(this.output()) ? true : undefined),
      this.spawned,
    );
  }

  /** Kills the service outright (SIGKILL to its process group), the way a crash would; keeps its data. */
  kill(): Promise<void> {
    return killNow(this.spawned.child);
  }

  /** The service's process id (the leader of its process group). */
  get pid(): number {
    return this.spawned.child.pid!;
  }

  /** Sends `signal` to the service's process alone, not to its group: what `docker stop` or systemd do. */
  signal(signal: NodeJS.Signals): void {
    process.kill(this.pid, signal);
  }

  /** Resolves with the exit code (or the signal that ended it) once the process has exited. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const { child } = this.spawned;
    if (child.exitCode !== null || child.signalCode !== null)
      return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
    return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  }

  async stop(): Promise<void> {
    await stopChild(this.spawned.child);
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * A connection per call. Node's default agent keeps sockets alive, and a node closes one after 5 s
 * idle: a call written on it just then fails with "socket hang up". A before-all hook met it on
 * Node 24 under CI's load, its ethers socket idle while a batch of 1,000 evm_mine took about 5 s.
 */
const ONE_CONNECTION_PER_CALL = new Agent({ keepAlive: false });

/** A JSON-RPC provider straight to the node, for reading chain state behind the service's back. */
export function directProvider(rpcUrl: string, chainId = 31337): JsonRpcProvider {
  const request = new FetchRequest(rpcUrl);
  if (request.url.startsWith("http:")) {
    request.getUrlFunc = FetchRequest.createGetUrlFunc({ agent: ONE_CONNECTION_PER_CALL });
  }
  return new JsonRpcProvider(request, chainId, { staticNetwork: true, cacheTimeout: -1, batchMaxCount: 1 });
}

/** The collection at `address`, bound to `runner` with the reference ABI. */
export function collectionAt(address: string, runner: JsonRpcProvider | Wallet): Contract {
  return new Contract(address, collectionInterface(), runner);
}

/** Deploys a reference collection directly with ethers (not through the service). */
export async function deployDirectly(
  wallet: Wallet,
  params: Partial<Pick<CollectionParams, "cost" | "maxSupply" | "maxMintAmountPerTx">> = {},
): Promise<string> {
  const sent = await wallet.sendTransaction(await deployTransaction({ ...DEFAULT_COLLECTION, ...params }));
  const receipt = await sent.wait();
  if (!receipt?.contractAddress) throw new Error(`deployment ${sent.hash} created no contract`);
  return receipt.contractAddress;
}

/** Deploys raw init code and returns the address of the created contract. */
export async function deployBytecode(wallet: Wallet, initCode: string): Promise<string> {
  const tx = await wallet.sendTransaction({ data: initCode });
  const receipt = await tx.wait();
  if (!receipt?.contractAddress) throw new Error("raw deployment did not create a contract");
  return receipt.contractAddress;
}

// A JSON body from the service; tests look into it freely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonBody = Record<string, any>;

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  body: JsonBody;
}

/** Plain `fetch` against the service; every response text is kept for the secret scan. */
export class ApiClient {
  readonly responseTexts: string[] = [];

  constructor(readonly baseUrl: string) {}

  async request(
    method: string,
    pathname: string,
    init: { json?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...init.headers };
    let body: string | undefined;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers["content-type"] ??= "application/json";
    } else if (init.raw !== undefined) {
      body = init.raw;
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(`${this.baseUrl}${pathname}`, { method, headers, body });
    const text = await res.text();
    this.responseTexts.push(text);
    checkAnswer({ method, url: pathname, status: res.status, contentType: res.headers.get("content-type"), text });
    let parsed: JsonBody = {};
    if ((res.headers.get("content-type") ?? "").includes("json") && text !== "") parsed = JSON.parse(text) as JsonBody;
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  post(pathname: string, json: unknown, headers?: Record<string, string>): Promise<ApiResponse> {
    return this.request("POST", pathname, { json, headers });
  }

  get(pathname: string): Promise<ApiResponse> {
    return this.request("GET", pathname);
  }
}

/** The secrets (each in the forms they could be printed in) found in `text`. */
export function leakedSecrets(text: string): string[] {
  const haystack = text.toLowerCase();
  const found: string[] = [];
  for (const secret of usedSecrets) {
    const bare = secret.toLowerCase().replace(/^0x/, "");
    if (haystack.includes(bare)) found.push(`${secret.slice(0, 8)}…`);
  }
  return found;
}
