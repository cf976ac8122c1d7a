import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import type { JsonRpcProvider } from "ethers";
import {
  ApiClient,
  ChainNode,
  collectionAt,
  deployWithScript,
  directProvider,
  ROOT,
  sleep,
  TEST_API_KEY,
  type ApiResponse,
  type JsonBody,
  type ServiceProcess,
} from "../api/harness";
import { ChainControl } from "../support/chain-control";
import type { SoftHsmToken } from "../support/softhsm";
import { fund, importableKey, KeyedClient, newMasterKey, startWalletService, tokenWithKey, walletEnv } from "./fixture";
import { seededDataDir } from "../support/pglite-template";

const run = promisify(execFile);

/** `npm run wallets:rotate-master-key`'s command line from package.json, run without npm in between. */
function rotationCommand(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
  const [command, ...args] = pkg.scripts["wallets:rotate-master-key"].split(/\s+/);
  if (command !== "node") throw new Error("wallets:rotate-master-key is no longer a plain node command");
  return [process.execPath, ...args];
}

describe("wallets across restarts: re-signing without a request, the master key (PGlite, automine off)", function () {
  this.timeout(120_000);
  let node: ChainNode;
  let chain: ChainControl;
  let provider: JsonRpcProvider;
  let collection: string;
  let hsm: SoftHsmToken;
  let dataDir: string;
  let service: ServiceProcess;
  let root: KeyedClient;
  const firstKey = newMasterKey();
  const wallets: Record<"hot" | "cold" | "hsm", JsonBody> = {} as never;

  const env = (masterKey: string | undefined) =>
    walletEnv(masterKey, hsm, {
      TX_TIMEOUT_MS: "2000",
      BLOCK_POLL_MS: "100",
      RPC_TIMEOUT_MS: "1500",
      TX_RESEND_BLOCKS: "3",
    });
  const start = async (masterKey: string | undefined) => {
    service = await startWalletService(node.rpcUrl, dataDir, env(masterKey));
    root = new KeyedClient(new ApiClient(service.url));
  };
  const supply = async () => (await collectionAt(collection, provider).totalSupply()) as bigint;

  before(async function () {
    this.timeout(240_000);
    [node, { hsm }] = await Promise.all([ChainNode.start(), tokenWithKey("hsm-key")]);
    collection = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "1000" });
    chain = new ChainControl(node.rpcUrl);
    await chain.setAutomine(false);
    provider = directProvider(node.rpcUrl);
    dataDir = await seededDataDir("wallets-recovery-");
    await start(firstKey);
    wallets.hot = await root.createWallet({ kind: "local", label: "hot" });
    wallets.cold = await root.createWallet({ kind: "local", label: "cold", privateKey: importableKey().privateKey });
    wallets.hsm = await root.createWallet({ kind: "pkcs11", label: "hsm", keyLabel: "hsm-key" });
    for (const wallet of Object.values(wallets)) await fund(provider, wallet.address);
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await node?.stop();
    hsm?.remove();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("SIGKILL with a local and a PKCS#11 wallet's mints pending, a fee spike, a restart and no request: both are replaced with higher fees and confirm, minted once", async function () {
    this.timeout(240_000);
    const before = await supply();
    const mint = (from: string) => root.post("/nft/mint", { from, contractAddress: collection, mintAmount: 1 });
    const sent = await Promise.all([mint("hot"), mint("hsm")]);
    for (const res of sent) expect(res.status, res.text).to.equal(202);
    const pending = await chain.pendingTransactions();
    expect(pending.map((tx) => tx.from.toLowerCase()).sort()).to.deep.equal(
      [wallets.hot.address, wallets.hsm.address].map((a: string) => a.toLowerCase()).sort(),
    );
    const spiked = pending.reduce((max, tx) => (tx.maxFeePerGas! > max ? tx.maxFeePerGas! : max), 0n);

    await service.kill();
    const release = chain.keepBaseFeeAbove(spiked);
    try {
      await start(firstKey);
      // No request from here on: only blocks, until both wallets' nonces have moved on.
      const deadline = Date.now() + 90_000;
      while ((await chain.nonce(wallets.hot.address)) < 1 || (await chain.nonce(wallets.hsm.address)) < 1) {
        if (Date.now() > deadline) throw new Error(`not replaced:\n${service.output().slice(-3000)}`);
        await chain.mine();
        await sleep(300);
      }
    } finally {
      release();
    }
    expect(await supply()).to.equal(before + 2n);
    for (const res of sent) {
      // The chain has it; the follower confirms it at its next pass (BLOCK_POLL_MS).
      let op = (await root.get(`/nft/operations/${res.body.operationId}`)).body;
      for (const until = Date.now() + 15_000; op.status === "sent" && Date.now() < until;) {
        await sleep(200);
        op = (await root.get(`/nft/operations/${res.body.operationId}`)).body;
      }
      expect(op.status, JSON.stringify(op)).to.equal("confirmed");
      expect(op.transactionHashes.length).to.be.at.least(2);
      expect(op.transactionHashes[0]).to.equal(res.body.transactionHash);
      const replacement = await provider.getTransaction(op.transactionHash);
      expect(replacement!.maxFeePerGas! > spiked).to.equal(true);
      expect(replacement!.nonce).to.equal(0);
    }
  });

  describe("the master key", function () {
    const secondKey = newMasterKey();

    /** npm start on the data directory with `masterKey`; what it printed when it stopped at once. */
    async function refusedStart(masterKey: string | undefined): Promise<string> {
      try {
        await start(masterKey);
      } catch (err) {
        const message = (err as Error).message;
        expect(message).to.match(/the process exited \(1\)/);
        return message.slice(message.indexOf("\n") + 1);
      }
      throw new Error("the service started");
    }

    before(async function () {
      this.timeout(30_000);
      await service.stop();
    });

    it("wallets:rotate-master-key re-seals every local wallet under NEW_WALLET_MASTER_KEY in one transaction, and says so in one line", async function () {
      const [command, ...args] = rotationCommand();
      const { stdout, stderr } = await run(command, args, {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          RPC_URL: node.rpcUrl,
          API_KEY: TEST_API_KEY,
          DATA_DIR: dataDir,
          WALLET_MASTER_KEY: firstKey,
          NEW_WALLET_MASTER_KEY: secondKey,
        },
        timeout: 60_000,
      });
      expect(stderr).to.equal("");
      expect(stdout).to.equal(
        "Re-sealed 2 local wallets under the new master key (NEW_WALLET_MASTER_KEY): start the service with WALLET_MASTER_KEY set to it\n",
      );
    });

    it("a start with the old (now wrong) master key stops with one line naming WALLET_MASTER_KEY", async function () {
      expect(await refusedStart(firstKey)).to.equal(
        "Failed to start: WALLET_MASTER_KEY is wrong: it does not decrypt the wallets in the store\n",
      );
    });

    it("with the new key every wallet still signs, and the rotation is an audit event", async function () {
      this.timeout(180_000);
      await start(secondKey);
      const before = await supply();
      for (const label of ["hot", "cold", "hsm"] as const) {
        const answer = root.post("/nft/mint", { from: label, contractAddress: collection, mintAmount: 1 });
        const res: ApiResponse = await mineWhenPending(answer);
        expect(res.status, `${label}: ${res.text}`).to.equal(200);
        expect(res.body.from).to.equal(wallets[label].address);
      }
      expect(await supply()).to.equal(before + 3n);
      const events = (await root.get("/audit-events?limit=20")).body.auditEvents as JsonBody[];
      const rotated = events.find((e) => e.action === "master-key.rotated");
      expect(rotated).to.deep.include({
        targetType: "master-key",
        keyName: "wallets:rotate-master-key (command)",
        details: { wallets: 2 },
      });
    });

    async function mineWhenPending(answer: Promise<ApiResponse>): Promise<ApiResponse> {
      const deadline = Date.now() + 20_000;
      while ((await chain.pendingTransactions()).length === 0) {
        if (Date.now() > deadline) return answer;
        await sleep(25);
      }
      await chain.mine();
      return answer;
    }
  });
});
