/**
 * The production entry as an operator deploys it: `npm run build`, then dist/ with package.json
 * and package-lock.json alone in a fresh directory, `npm ci --omit=dev`, and
 * `node dist/server/cli.js` against a `hardhat node`: no Hardhat, TypeScript or `artifacts/`.
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet, type JsonRpcProvider } from "ethers";
import {
  collectionAt,
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ROOT,
  ServiceProcess,
  deployDirectly,
  directProvider,
} from "../api/harness";
import { sharedNode } from "../support/shared-node";

interface Ran {
  status: number | null;
  output: string;
}

/** Runs a command to its end without blocking this process (the test's own servers keep answering). */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Ran> {
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  return new Promise((resolve) => child.once("close", (status) => resolve({ status, output })));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)],
  );
}

describe("the production entry: npm run build, then node dist/server/cli.js with production dependencies only", function () {
  let deployDir: string;
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let service: ServiceProcess;
  let api: ApiClient;
  let collection: string;
  const owner = new Wallet(DEV_KEYS[0]);

  before(async function () {
    this.timeout(240_000);
    const built = await run("npm", ["run", "build"], ROOT);
    if (built.status !== 0) throw new Error(`npm run build failed:\n${built.output}`);

    deployDir = mkdtempSync(path.join(tmpdir(), "nft-production-"));
    cpSync(path.join(ROOT, "dist"), path.join(deployDir, "dist"), { recursive: true });
    for (const file of ["package.json", "package-lock.json"]) cpSync(path.join(ROOT, file), path.join(deployDir, file));
    // The npm cache is warm from the project's own install: no download is expected.
    const installed = await run(
      "npm",
      ["ci", "--omit=dev", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"],
      deployDir,
    );
    if (installed.status !== 0) throw new Error(`npm ci --omit=dev failed:\n${installed.output}`);

    node = await sharedNode();
    provider = directProvider(node.rpcUrl);
    collection = await deployDirectly(owner.connect(provider));
    const nft = collectionAt(collection, owner.connect(provider));
    await (await nft.getFunction("mintForFree")(2, owner.address)).wait();

    service = await ServiceProcess.start({
      rpcUrl: node.rpcUrl,
      entry: { command: process.execPath, args: ["dist/server/cli.js"], cwd: deployDir },
    });
    api = new ApiClient(service.url);
  });

  after(async function () {
    // Stops a service and a node and deletes an installed node_modules: past 30 s on a loaded machine.
    this.timeout(120_000);
    await service?.stop();
    provider?.destroy();
    if (deployDir) rmSync(deployDir, { recursive: true, force: true });
  });

  it("installs no development package (Hardhat, TypeScript, ts-node, solc) and has no artifacts/ to read", function () {
    for (const name of ["hardhat", "typescript", "ts-node", "solc", "@nomicfoundation"])
      expect(existsSync(path.join(deployDir, "node_modules", name)), name).to.equal(false);
    expect(existsSync(path.join(deployDir, "artifacts"))).to.equal(false);
    expect(existsSync(path.join(deployDir, "dist", "server", "chain", "collection-artifact.json"))).to.equal(true);
  });

  it("holds no code that requires a development package, and no Hardhat dev chain", function () {
    const files = filesUnder(path.join(deployDir, "dist")).filter((f) => f.endsWith(".js"));
    expect(files).to.include(path.join(deployDir, "dist", "server", "cli.js"));
    for (const file of files)
      expect(readFileSync(file, "utf8"), file).to.not.match(/require\("(hardhat|ts-node|typescript|solc)[/"]/);
    expect(existsSync(path.join(deployDir, "dist", "server", "embedded"))).to.equal(false);
  });

  it("answers /health/ready 200 with the node's chain id and block", async function () {
    const res = await api.get("/health/ready");
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ status: "ok", chainId: "31337", blockNumber: await provider.getBlockNumber() });
  });

  it("reads tokenURI and total-supply of the node's collection", async function () {
    const uri = await api.post("/nft/tokenURI", { privateKey: DEV_KEYS[0], contractAddress: collection, tokenId: "2" });
    expect(uri.status, uri.text).to.equal(200);
    expect(uri.body.tokenURI).to.match(/2\.json$/);
    const supply = await api.post("/nft/total-supply", { privateKey: DEV_KEYS[0], contractAddress: collection });
    expect(supply.status, supply.text).to.equal(200);
    expect(supply.body.totalSupply).to.equal("2");
    expect(supply.body.wallet.tokenIds).to.deep.equal(["1", "2"]);
  });

  it("signs and sends a mint", async function () {
    const mint = await api.post("/nft/mint", { privateKey: DEV_KEYS[6], contractAddress: collection, mintAmount: 1 });
    expect(mint.status, mint.text).to.equal(200);
    expect(mint.body.tokenIds).to.deep.equal(["3"]);
  });

  it("serves /console, its page from dist/ and its libraries from the production node_modules", async function () {
    for (const asset of [
      "/console",
      "/console/app.js",
      "/console/vendor/preact.mjs",
      "/console/vendor/uPlot.iife.min.js",
    ]) {
      const res = await api.get(asset);
      expect(res.status, asset).to.equal(200);
      expect(res.headers.get("content-security-policy"), asset).to.include("frame-ancestors 'none'");
    }
  });

  it("serves /metrics and /health/live", async function () {
    expect((await api.get("/health/live")).status).to.equal(200);
    const metrics = await api.get("/metrics");
    expect(metrics.status).to.equal(200);
    expect(metrics.text).to.match(/^rpc_calls_total\{method="eth_call",chain="31337"\} \d+/m);
  });

  it("refuses to start without RPC_URL or CHAINS, with one line naming them", async function () {
    this.timeout(30_000);
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: "0" };
    delete env.RPC_URL;
    const result = await run(process.execPath, ["dist/server/cli.js"], deployDir, env);
    expect(result.status).to.equal(1);
    expect(result.output.trim().split("\n")).to.deep.equal([
      "Invalid configuration: RPC_URL or CHAINS is required by the production entry (npm start runs the embedded dev chain)",
    ]);
  });
});
