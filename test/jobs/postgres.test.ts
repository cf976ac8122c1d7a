import { expect } from "chai";
import { Client } from "pg";
import { Wallet, type JsonRpcProvider } from "ethers";
import {
  ApiClient,
  ChainNode,
  collectionAt,
  deployDirectly,
  DEV_KEYS,
  directProvider,
  ServiceProcess,
  type JsonBody,
} from "../api/harness";
import { ChainControl } from "../support/chain-control";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";
import { fund, KeyedClient, newMasterKey } from "../wallets/fixture";
import { balancesOf, csvOf, expectedBalances, postCsv, recipientRows, transferOwnership, waitForJob } from "./fixture";

describe("jobs on two instances of one PostgreSQL database: one 2,000-row job shared, at most JOB_CONCURRENCY batches in flight, no batch sent twice", function () {
  this.timeout(300_000);
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let postgres: PostgresServer;
  let db: Client;
  let services: ServiceProcess[] = [];

  before(async function () {
    this.timeout(240_000);
    [node, postgres] = await Promise.all([ChainNode.start(), startPostgresServer()]);
    provider = directProvider(node.rpcUrl);
    const databaseUrl = await postgres.createDatabase();
    const env = {
      DATABASE_URL: databaseUrl,
      WALLET_MASTER_KEY: newMasterKey(),
      BLOCK_POLL_MS: "200",
      LOG_LEVEL: "warn",
      MAX_GAS_PER_TX: "3000000",
    };
    services = await Promise.all([
      ServiceProcess.start({ rpcUrl: node.rpcUrl, env }),
      ServiceProcess.start({ rpcUrl: node.rpcUrl, env }),
    ]);
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
  });

  after(async function () {
    this.timeout(60_000);
    provider?.destroy();
    await db?.end();
    await Promise.all(services.map((s) => s.stop()));
    await postgres?.stop();
    await node?.stop();
  });

  it("two instances share one job: one transaction per batch, every recipient its amount", async () => {
    const [a, b] = services.map((s) => new KeyedClient(new ApiClient(s.url)));
    const deployer = new Wallet(DEV_KEYS[0], provider);
    const collection = await deployDirectly(deployer, { maxSupply: 100_000n });
    const treasury = await a.createWallet({ kind: "local", label: "treasury" });
    await fund(provider, treasury.address as string, 10_000n * 10n ** 18n);
    await transferOwnership(deployer, collection, treasury.address as string);
    const chain = new ChainControl(node.rpcUrl);
    const firstBlock = await chain.blockNumber();
    await chain.setAutomine(false);
    await chain.setIntervalMining(1_000);

    const rows = recipientRows(2_000);
    const expected = expectedBalances(rows);
    const res = await postCsv(a, { kind: "airdrop", contractAddress: collection, from: "treasury" }, csvOf(rows));
    expect(res.status, res.text).to.equal(202);
    // Who claimed each batch, while the job runs: both instances take part.
    const owners = new Set<string>();
    let mostInFlight = 0;
    const id = res.body.jobId as string;
    for (;;) {
      const claims = await db.query<{ lease_owner: string }>(
        "SELECT DISTINCT lease_owner FROM job_batches WHERE job_id = $1 AND lease_owner IS NOT NULL",
        [id],
      );
      for (const row of claims.rows) owners.add(row.lease_owner);
      const open = await db.query<{ n: string }>(
        "SELECT count(*)::text AS n FROM job_batches WHERE job_id = $1 AND status IN ('sending', 'sent')",
        [id],
      );
      mostInFlight = Math.max(mostInFlight, Number(open.rows[0].n));
      const job = (await b.get(`/jobs/${id}`)).body as JsonBody;
      if (job.status !== "running") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const job = await waitForJob(b, id, ["completed"], 10_000);
    // Which instance claims a batch is a race (one may take them all); what must hold is below:
    // no batch sent twice, and never more than JOB_CONCURRENCY in flight across both.
    console.log(`      instances that claimed batches: ${owners.size} of 2`);
    expect(owners.size, "instances that claimed batches").to.be.within(1, 2);
    // JOB_CONCURRENCY (4) across both instances: claimed or sent, not yet recorded confirmed.
    expect(mostInFlight).to.be.within(1, 4);

    // Count the transactions: the wallet sent exactly one per batch to the collection.
    const lastBlock = await chain.blockNumber();
    let sent = 0;
    for (let n = firstBlock + 1; n <= lastBlock; n++) {
      const block = await provider.getBlock(n, true);
      for (const tx of block!.prefetchedTransactions) if (tx.from === treasury.address && tx.to === collection) sent++;
    }
    expect(sent).to.equal(job.batchCount);
    const operations = new Set((job.batches as JsonBody[]).map((batch) => batch.operationId));
    expect(operations.size).to.equal(job.batchCount);

    const total = [...expected.values()].reduce((x, y) => x + y, 0n);
    expect(await collectionAt(collection, provider).totalSupply()).to.equal(total);
    const balances = await balancesOf(provider, collection, [...expected.keys()]);
    expect([...expected].filter(([address, amount]) => balances.get(address) !== amount)).to.deep.equal([]);
  });
});
