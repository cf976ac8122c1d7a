/**
 * Issue 33's crash window in cancel: a batch's operation is recorded, then the process dies before
 * its broadcast. The restarted process's follower sends what the node never got, on its own; a
 * cancel answered meanwhile must still mean that nothing of the job goes out after it.
 */
import { rmSync } from "node:fs";
import { expect } from "chai";
import { Wallet, type JsonRpcProvider } from "ethers";
import {
  ApiClient,
  ChainNode,
  collectionAt,
  deployDirectly,
  DEV_KEYS,
  directProvider,
  ServiceProcess,
  sleep,
  type JsonBody,
} from "../api/harness";
import { sharedNode } from "../support/shared-node";
import { RpcProxy } from "../support/rpc-proxy";
import { fund, KeyedClient, newMasterKey } from "../wallets/fixture";
import { csvOf, postCsv, recipientRows, transferOwnership } from "./fixture";
import { seededDataDir } from "../support/pglite-template";

describe("cancel after a crash between a batch's record and its broadcast (PGlite, automining node, a proxy)", function () {
  this.timeout(180_000);
  let node: ChainNode;
  let proxy: RpcProxy;
  let provider: JsonRpcProvider;
  let dataDir: string;
  let service: ServiceProcess | undefined;
  const masterKey = newMasterKey();

  const start = async (env: Record<string, string> = {}) => {
    service = await ServiceProcess.start({
      rpcUrl: proxy.url,
      env: { DATA_DIR: dataDir, WALLET_MASTER_KEY: masterKey, BLOCK_POLL_MS: "200", LOG_LEVEL: "warn", ...env },
    });
    return new KeyedClient(new ApiClient(service.url));
  };

  before(async function () {
    node = await sharedNode();
    proxy = await RpcProxy.start(node.rpcUrl);
    provider = directProvider(node.rpcUrl);
    dataDir = await seededDataDir("jobs-cancel-crash-");
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await proxy?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("the batch recorded before the crash is withdrawn, never sent: supply and the wallet's nonce unchanged, its nonce reused by the next write", async () => {
    const deployer = new Wallet(DEV_KEYS[0], provider);
    const collection = await deployDirectly(deployer, { maxSupply: 1_000n });
    // CRASH_AT=row-stored: the first write (the job's one batch) is recorded, then the process dies.
    let client = await start({ CRASH_AT: "row-stored" });
    const treasury = await client.createWallet({ kind: "local", label: "treasury" });
    const wallet = treasury.address as string;
    await fund(provider, wallet, 10n ** 18n);
    await transferOwnership(deployer, collection, wallet);
    const nonceBefore = await provider.getTransactionCount(wallet, "pending");
    // The process may die before or after it answers the job's creation.
    await postCsv(client, { kind: "airdrop", contractAddress: collection, from: "treasury" }, csvOf(recipientRows(20)))
      .then((res) => expect(res.status, res.text).to.equal(202))
      .catch(() => undefined);
    expect((await service!.exited()).signal).to.equal("SIGKILL");
    expect(await provider.getTransactionCount(wallet, "pending")).to.equal(nonceBefore);

    // The restarted follower sends the recorded batch again and again, and the "node" (the proxy)
    // says it took it, but it never reaches the chain: the cancel comes in meanwhile.
    proxy.answerWith("eth_sendRawTransaction", { result: `0x${"ab".repeat(32)}` }, { times: Infinity });
    client = await start();
    const jobs = (await client.get("/jobs")).body.jobs as JsonBody[];
    expect(jobs).to.have.length(1);
    const id = jobs[0].jobId as string;
    const deadline = Date.now() + 30_000;
    while ((proxy.calls.get("eth_sendRawTransaction") ?? 0) === 0) {
      if (Date.now() > deadline) throw new Error("the follower never sent the recorded batch again");
      await sleep(100);
    }
    const cancelled = await client.post(`/jobs/${id}/cancel`, {});
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body.status).to.equal("cancelled");

    // Now the node answers for itself: the follower's next send would reach it.
    proxy.clearRules();
    let batch: JsonBody = {};
    for (const until = Date.now() + 30_000; Date.now() < until; await sleep(200)) {
      batch = ((await client.get(`/jobs/${id}`)).body.batches as JsonBody[])[0];
      if (batch.status !== "sent" && batch.status !== "sending") break;
    }
    expect(batch.status, JSON.stringify(batch)).to.equal("cancelled");
    const op = (await client.get(`/nft/operations/${batch.operationId}`)).body;
    expect(op.status).to.equal("failed");
    expect(op.error.code).to.equal("TRANSACTION_ABANDONED");
    // A few more passes of the follower: still nothing on chain.
    await sleep(3_000);
    expect(await collectionAt(collection, provider).totalSupply()).to.equal(0n);
    expect(await provider.getTransactionCount(wallet, "pending")).to.equal(nonceBefore);

    // The withdrawn batch's nonce is not a gap the wallet waits behind: the next write takes it.
    const mint = await client.post("/nft/mint", { from: "treasury", contractAddress: collection, mintAmount: 1 });
    expect(mint.status, mint.text).to.equal(200);
    expect(await provider.getTransactionCount(wallet, "latest")).to.equal(nonceBefore + 1);
  });
});
