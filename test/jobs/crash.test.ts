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
import { ChainControl } from "../support/chain-control";
import { fund, KeyedClient, newMasterKey } from "../wallets/fixture";
import { balancesOf, csvOf, expectedBalances, postCsv, recipientRows, transferOwnership, waitForJob } from "./fixture";
import { seededDataDir } from "../support/pglite-template";

describe("jobs across crashes: SIGKILL three times during a 5,000-row airdrop, restarted with no request (PGlite, a block a second)", function () {
  this.timeout(600_000);
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let dataDir: string;
  let service: ServiceProcess | undefined;
  const masterKey = newMasterKey();

  const start = async () => {
    service = await ServiceProcess.start({
      rpcUrl: node.rpcUrl,
      env: {
        DATA_DIR: dataDir,
        WALLET_MASTER_KEY: masterKey,
        BLOCK_POLL_MS: "200",
        LOG_LEVEL: "warn",
        // Smaller batches than the block allows: more of them, so each crash lands among them.
        MAX_GAS_PER_TX: "3000000",
      },
    });
    return new KeyedClient(new ApiClient(service.url));
  };

  before(async function () {
    this.timeout(120_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    dataDir = await seededDataDir("jobs-crash-");
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await node?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("grows supply by exactly the rows' amounts, gives no recipient a token twice, and ends completed", async () => {
    const deployer = new Wallet(DEV_KEYS[0], provider);
    const collection = await deployDirectly(deployer, { maxSupply: 100_000n });
    let client = await start();
    const treasury = await client.createWallet({ kind: "local", label: "treasury" });
    await fund(provider, treasury.address as string, 10_000n * 10n ** 18n);
    await transferOwnership(deployer, collection, treasury.address as string);
    const chain = new ChainControl(node.rpcUrl);
    await chain.setAutomine(false);
    await chain.setIntervalMining(1_000);

    const rows = recipientRows(5_000);
    const expected = expectedBalances(rows);
    const total = [...expected.values()].reduce((a, b) => a + b, 0n);
    const res = await postCsv(client, { kind: "airdrop", contractAddress: collection, from: "treasury" }, csvOf(rows));
    expect(res.status, res.text).to.equal(202);
    const id = res.body.jobId as string;
    console.log(`      ${res.body.batches} batches`);

    const progress: number[] = [];
    for (let crash = 1; crash <= 3; crash++) {
      await sleep(1_000 + Math.floor(Math.random() * 3_000));
      const job = (await client.get(`/jobs/${id}`)).body as JsonBody;
      progress.push(job.rowsByState.confirmed as number);
      expect(job.status, "the job ended before a crash: make it longer").to.equal("running");
      await service!.kill();
      client = await start();
    }
    console.log(`      confirmed rows at each SIGKILL: ${progress.join(", ")}`);
    const job = await waitForJob(client, id, ["completed", "failed", "paused"], 300_000);
    expect(job.status, JSON.stringify(job.error ?? job.rowsByState)).to.equal("completed");
    expect(job.rowsByState.confirmed).to.equal(expected.size);

    expect(await collectionAt(collection, provider).totalSupply()).to.equal(total);
    const balances = await balancesOf(provider, collection, [...expected.keys()]);
    const wrong = [...expected].filter(([address, amount]) => balances.get(address) !== amount);
    expect(wrong, "recipients whose balance is not their amount").to.deep.equal([]);
  });
});
