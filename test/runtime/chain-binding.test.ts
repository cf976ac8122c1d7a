/**
 * The store bound to its chain (API.md, "Runtime shape"): npm start's embedded chain is new at each
 * start, so the previous chain's operations, nonces, idempotency keys and index are cleared (wallets
 * and access keys stay); with RPC_URL, a chain lacking the blocks the store saw stops the start with
 * one line naming `npm run store:forget-chain`, and a reorg within the index's window does not.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ROOT,
  ServiceProcess,
  TEST_API_KEY,
  deployWithScript,
  sleep,
  type ApiResponse,
} from "../api/harness";
import { ChainControl } from "../support/chain-control";

const AUTH = { Authorization: `Bearer ${TEST_API_KEY}` };

function mintForFree(api: ApiClient, contractAddress: string, key: string): Promise<ApiResponse> {
  return api.post(
    "/nft/mintForFree",
    { privateKey: DEV_KEYS[0], contractAddress, mintAmount: 1 },
    { "Idempotency-Key": key },
  );
}

/** The value printed after `label` in the start banner, once the banner is out. */
async function bannerLine(service: ServiceProcess, label: string): Promise<string> {
  for (let i = 0; i < 300 && !/^\s+Master key\s/m.test(service.output()); i++) await sleep(100);
  const match = new RegExp(`^\\s+${label}\\s+(.+)$`, "m").exec(service.output());
  if (!match) throw new Error(`banner has no ${label} line:\n${service.output()}`);
  return match[1];
}

/** Runs `npm run <script>` in the project with `env` (on top of ours); its exit code and output. */
function npmRun(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn("npm", ["run", "--silent", script], { cwd: ROOT, env: { ...process.env, ...env } });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, output })));
}

describe("the store bound to its chain", function () {
  let dataDir: string;

  beforeEach(function () {
    dataDir = mkdtempSync(path.join(tmpdir(), "chain-binding-"));
  });

  afterEach(function () {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("npm start again (a new embedded chain) clears the old chain's operations and idempotency keys, keeps wallets and access keys, and says so in the banner", async function () {
    this.timeout(240_000);
    const env = { DATA_DIR: dataDir, API_KEY: TEST_API_KEY };
    let service = await ServiceProcess.start({ env });
    let api = new ApiClient(service.url);
    const contractAddress = (await bannerLine(service, "Contract")).split(/\s+/)[0];
    let first: ApiResponse;
    try {
      const wallet = await api.post("/wallets", { kind: "local", label: "treasury" }, AUTH);
      expect(wallet.status, wallet.text).to.equal(201);
      const key = await api.post("/access-keys", { name: "shop", scopes: ["nft:read"] }, AUTH);
      expect(key.status, key.text).to.equal(201);
      first = await mintForFree(api, contractAddress, "order-1842");
      expect(first.status, first.text).to.equal(200);
      expect(first.body.tokenIds).to.deep.equal(["1"]);
      // The old chain goes on a little: the new one will be shorter than what the store saw.
      for (let i = 0; i < 3; i++) expect((await mintForFree(api, contractAddress, `more-${i}`)).status).to.equal(200);
    } finally {
      await service.stop();
    }

    service = await ServiceProcess.start({ env });
    api = new ApiClient(service.url);
    try {
      expect(await bannerLine(service, "Chain data")).to.match(
        /cleared the previous chain's 4 operations, 4 idempotency keys, .*1 indexed collection/,
      );
      const again = await mintForFree(api, contractAddress, "order-1842");
      expect(again.status, again.text).to.equal(200);
      expect(again.headers.get("idempotent-replayed"), "no replay from a chain that is gone").to.equal(null);
      expect(again.body.operationId).to.not.equal(first.body.operationId);
      expect(again.body.tokenIds).to.deep.equal(["1"]);
      const old = await api.get(`/nft/operations/${first.body.operationId}`);
      expect(old.status, old.text).to.equal(404);
      const wallets = await api.request("GET", "/wallets", { headers: AUTH });
      expect(wallets.text).to.include('"treasury"');
      const keys = await api.request("GET", "/access-keys", { headers: AUTH });
      expect(keys.text).to.include('"shop"');
    } finally {
      await service.stop();
    }
  });

  describe("with RPC_URL", function () {
    let node: ChainNode | undefined;

    afterEach(async function () {
      this.timeout(30_000);
      await node?.stop();
      node = undefined;
    });

    it("a restarted node (a new chain at the same URL) stops the start with one line naming npm run store:forget-chain; after it, the key runs anew", async function () {
      this.timeout(300_000);
      node = await ChainNode.start();
      const collection = await deployWithScript(node.rpcUrl);
      const env = { DATA_DIR: dataDir };
      let service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
      try {
        const first = await mintForFree(new ApiClient(service.url), collection, "order-1842");
        expect(first.status, first.text).to.equal(200);
      } finally {
        await service.stop();
      }
      await node.stop();
      node = await ChainNode.start(node.port);
      expect(await deployWithScript(node.rpcUrl)).to.equal(collection);

      const refused = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env }).then(
        async (started) => {
          await started.stop();
          return "";
        },
        (err: Error) => err.message,
      );
      const failures = refused.split("\n").filter((line) => line.startsWith("Failed to start"));
      expect(failures, refused).to.have.length(1);
      expect(failures[0]).to.include("npm run store:forget-chain").and.include("block 0");

      const forgot = await npmRun("store:forget-chain", { RPC_URL: node.rpcUrl, API_KEY: TEST_API_KEY, ...env });
      expect(forgot.code, forgot.output).to.equal(0);
      expect(forgot.output).to.match(/Forgot chain 31337: 1 operations \(1 idempotency keys\)/);

      service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
      try {
        const again = await mintForFree(new ApiClient(service.url), collection, "order-1842");
        expect(again.status, again.text).to.equal(200);
        expect(again.headers.get("idempotent-replayed")).to.equal(null);
        expect(again.body.tokenIds).to.deep.equal(["1"]);
      } finally {
        await service.stop();
      }
    });

    it("a reorg within the index's window (evm_snapshot / evm_revert) does not stop the start; one deeper than it does", async function () {
      this.timeout(300_000);
      node = await ChainNode.start();
      const chain = new ChainControl(node.rpcUrl);
      const collection = await deployWithScript(node.rpcUrl);
      const beforeEverything = await chain.snapshot();
      await chain.mine(300);
      const nearTheHead = await chain.snapshot();
      await chain.mine(100);
      const env = { DATA_DIR: dataDir };
      let service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
      try {
        const minted = await mintForFree(new ApiClient(service.url), collection, "on-the-removed-branch");
        expect(minted.status, minted.text).to.equal(200);
      } finally {
        await service.stop();
      }

      // 100 blocks and the mint undone, other blocks mined in place: a reorg the index undoes.
      expect(await chain.revert(nearTheHead)).to.equal(true);
      await chain.mine(5);
      service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
      try {
        const minted = await mintForFree(new ApiClient(service.url), collection, "on-the-new-branch");
        expect(minted.status, minted.text).to.equal(200);
      } finally {
        await service.stop();
      }

      // Back before blocks the store holds as its chain for good: not a reorg it can follow.
      expect(await chain.revert(beforeEverything)).to.equal(true);
      await chain.mine(5);
      const refused = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env }).then(
        async (started) => {
          await started.stop();
          return "";
        },
        (err: Error) => err.message,
      );
      expect(refused).to.match(
        /Failed to start: .*has no block \d+, which the store has seen.*npm run store:forget-chain/,
      );
    });
  });
});
