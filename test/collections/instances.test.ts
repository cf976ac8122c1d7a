import { expect } from "chai";
import { Wallet, type Contract, type JsonRpcProvider } from "ethers";
import { Client } from "pg";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  collectionAt,
  deployDirectly,
  directProvider,
} from "../api/harness";
import { sharedNode } from "../support/shared-node";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";
import { allOwners, headOf, indexedTo, indexedWallet, ROOT_KEY } from "./fixture";

describe("collections index: two service processes on one PostgreSQL", function () {
  let node: ChainNode | undefined;
  let pg: PostgresServer | undefined;
  let databaseUrl: string;
  let services: ServiceProcess[] = [];
  let apis: ApiClient[];
  let provider: JsonRpcProvider;
  let owner: Wallet;
  let nft: Contract;
  let address: string;
  const holders = Array.from({ length: 4 }, () => Wallet.createRandom().address);

  before(async function () {
    this.timeout(150_000);
    const [chain, database] = await Promise.all([sharedNode(), startPostgresServer()]);
    node = chain;
    pg = database;
    databaseUrl = await pg.createDatabase();
    provider = directProvider(node.rpcUrl);
    owner = new Wallet(DEV_KEYS[9], provider);
    address = await deployDirectly(owner, { maxSupply: 100_000n, maxMintAmountPerTx: 1_000n });
    nft = collectionAt(address, owner);
    for (let i = 0; i < 6; i++) await (await nft.mintForFree(1_000, holders[i % holders.length])).wait();
    const started = await Promise.allSettled(
      [0, 1].map(() =>
        ServiceProcess.start({ rpcUrl: node!.rpcUrl, env: { DATABASE_URL: databaseUrl, BLOCK_POLL_MS: "100" } }),
      ),
    );
    services = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    apis = services.map((s) => new ApiClient(s.url));
  });

  after(async function () {
    this.timeout(60_000);
    provider?.destroy();
    await Promise.all(services.map((s) => s.stop()));
    await pg?.stop();
  });

  it("both answer the same, one of them indexes the collection, and no Transfer is stored twice", async function () {
    this.timeout(120_000);
    const registered = await apis[0].post("/collections", { address }, ROOT_KEY);
    expect(registered.status, registered.text).to.equal(201);
    expect((await apis[1].post("/collections", { address }, ROOT_KEY)).status, "already registered").to.equal(200);
    const head = await headOf(provider);
    const views = await Promise.all(apis.map((api) => indexedTo(api, address, head)));
    expect(views[0]).to.deep.equal({ ...views[1], chainHead: views[0].chainHead });
    expect(await allOwners(apis[0], address, 3)).to.deep.equal(await allOwners(apis[1], address, 3));
    expect(await indexedWallet(apis[0], address, holders[1], 700)).to.deep.equal(
      await indexedWallet(apis[1], address, holders[1]),
    );

    // A write through one instance is read through the other with ?minBlock.
    const gift = await apis[1].post("/nft/mintForFree", {
      privateKey: owner.privateKey,
      contractAddress: address,
      mintAmount: 3,
      receiver: holders[3],
    });
    expect(gift.status, gift.text).to.equal(200);
    const wallet = await apis[0].get(
      `/collections/${address}/wallets/${holders[3]}?limit=2000&minBlock=${gift.body.blockNumber}`,
    );
    expect(wallet.status, wallet.text).to.equal(200);
    expect(wallet.body.tokenIds.slice(-3)).to.deep.equal(gift.body.tokenIds);

    await Promise.all(apis.map((api) => indexedTo(api, address, gift.body.blockNumber as number)));
    // Every Transfer here is a mint, so the chain's supply counts them. (An eth_getLogs of all 6,003
    // took the Hardhat node 10 s alone, and this test over 120 s beside CI's other run.)
    const transfers = Number(await nft.totalSupply({ blockTag: gift.body.blockNumber as number }));
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ stored: string; distinct: string; owners: string }>(
        `SELECT count(*)::text AS stored, count(DISTINCT (t.block_hash, t.log_index))::text AS distinct,
           (SELECT count(DISTINCT lease_owner) FROM indexed_collections WHERE address = $1)::text AS owners
         FROM index_transfers t JOIN indexed_collections c ON c.id = t.collection_id
         WHERE c.address = $1 AND t.block_number <= $2`,
        [address.toLowerCase(), gift.body.blockNumber],
      );
      expect(Number(rows[0].stored), "Transfer logs stored").to.equal(transfers);
      expect(Number(rows[0].distinct), "each once").to.equal(transfers);
      expect(Number(rows[0].owners), "one lease holder").to.equal(1);
    } finally {
      await client.end();
    }
  });
});
