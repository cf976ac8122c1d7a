/**
 * Metadata on two service instances of one PostgreSQL database (API.md, "Metadata"), each behind
 * its own RpcProxy to the same `hardhat node`, so each instance's JSON-RPC calls are counted apart.
 * Instance `a` registers the collection and indexes it (it holds the lease); `b` shares the store only.
 *  - A repeat tokenURI read of an ERC-4906 collection costs no JSON-RPC call, even a block later.
 *  - What `b` keeps of a collection's documents follows a change made through `a`: a new placeholder,
 *    and the reveal.
 */
import { expect } from "chai";
import canonicalize from "canonicalize";
import type { Contract, JsonRpcProvider, Wallet } from "ethers";
import { DEFAULT_COLLECTION, deployTransaction } from "../../server/chain/collection";
import {
  ApiClient,
  ChainNode,
  ServiceProcess,
  collectionAt,
  directProvider,
  fundedWallet,
  sleep,
} from "../api/harness";
import { sharedNode } from "../support/shared-node";
import { ROOT_KEY } from "../collections/fixture";
import { RpcProxy } from "../support/rpc-proxy";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";

const COUNT = 6;
const documentOf = (n: number) => ({ name: `Token #${n}`, attributes: [{ trait_type: "Eyes", value: `Eyes${n}` }] });

describe("Metadata on two instances of one PostgreSQL database (real node, real contract)", function () {
  let node: ChainNode;
  let postgres: PostgresServer;
  let provider: JsonRpcProvider;
  let owner: Wallet;
  let nft: Contract;
  let collection: string;
  let chainId: string;
  /** Indexes the collection. */
  let a: ServiceProcess;
  /** Shares the store, does not index the collection. */
  let b: ServiceProcess;
  let proxyA: RpcProxy;
  let proxyB: RpcProxy;
  let apiA: ApiClient;
  let apiB: ApiClient;

  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
    for (const deadline = Date.now() + timeoutMs; ; await sleep(100)) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    }
  }

  before(async function () {
    this.timeout(300_000);
    node = await sharedNode();
    postgres = await startPostgresServer();
    const databaseUrl = await postgres.createDatabase();
    [proxyA, proxyB] = await Promise.all([RpcProxy.start(node.rpcUrl), RpcProxy.start(node.rpcUrl)]);
    provider = directProvider(node.rpcUrl);
    owner = (await fundedWallet(provider)).connect(provider);
    const deployed = (await (
      await owner.sendTransaction(await deployTransaction({ ...DEFAULT_COLLECTION, cost: 0n }))
    ).wait())!;
    collection = deployed.contractAddress!;
    nft = collectionAt(collection, owner);
    await (await nft.mintForFree(COUNT, owner.address)).wait();
    chainId = (await provider.getNetwork()).chainId.toString();
    const env = { DATABASE_URL: databaseUrl, BLOCK_POLL_MS: "100" };
    a = await ServiceProcess.start({ rpcUrl: proxyA.url, env });
    apiA = new ApiClient(a.url);
    const registered = await apiA.post(
      "/collections",
      { address: collection, fromBlock: deployed.blockNumber },
      ROOT_KEY,
    );
    expect(registered.status, registered.text).to.equal(201);
    const head = await provider.getBlockNumber();
    await until("a to index the mints", async () => {
      const res = await apiA.get(`/collections/${collection}`);
      return res.status === 200 && (res.body.indexedBlock as number) >= head ? true : undefined;
    });
    // Started once `a` holds the collection's lease: `b` only shares the store.
    b = await ServiceProcess.start({ rpcUrl: proxyB.url, env });
    apiB = new ApiClient(b.url);
  });

  after(async function () {
    this.timeout(60_000);
    provider?.destroy();
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([proxyA?.close(), proxyB?.close()]);
    await postgres?.stop();
  });

  const tokenUri = async (api: ApiClient, tokenId: number) => {
    const res = await api.post("/nft/tokenURI", {
      privateKey: owner.privateKey,
      contractAddress: collection,
      tokenId: String(tokenId),
    });
    expect(res.status, res.text).to.equal(200);
    return res.body.tokenURI as string;
  };

  const served = (api: ApiClient, tokenId: number) => api.get(`/metadata/${chainId}/${collection}/${tokenId}.json`);
  /** Waits until `b` serves token `tokenId` as `text`; answers how long that took. */
  const bServes = async (tokenId: number, text: string) => {
    const started = Date.now();
    await until(`b to serve token ${tokenId} as ${text}`, async () =>
      (await served(apiB, tokenId)).text === text ? true : undefined,
    );
    return Date.now() - started;
  };

  it("answers repeat tokenURI reads of an ERC-4906 collection with no eth_call at its proxy, even a block later", async function () {
    this.timeout(60_000);
    const ids = Array.from({ length: COUNT }, (_, i) => i + 1);
    const first = [];
    for (const id of ids) first.push(await tokenUri(apiA, id));
    // A new block that does not touch the collection: an answer kept for one block would be read again.
    const before = await provider.getBlockNumber();
    await (await owner.sendTransaction({ to: owner.address, value: 1n })).wait();
    await until("a to see the new block", async () => {
      const res = await apiA.get(`/collections/${collection}`);
      return (res.body.indexedBlock as number) > before ? true : undefined;
    });
    proxyA.resetCounts();
    const again = [];
    for (let round = 0; round < 3; round++) for (const id of ids) again.push(await tokenUri(apiA, id));
    expect(again).to.deep.equal([...first, ...first, ...first]);
    expect(proxyA.calls.get("eth_call") ?? 0, JSON.stringify([...proxyA.calls])).to.equal(0);
  });

  it("serves on the other instance what changed through the first: a new placeholder, then the reveal", async function () {
    this.timeout(180_000);
    const put = (json: unknown) =>
      apiA.request("PUT", `/collections/${collection}/metadata`, { json, headers: ROOT_KEY });
    const tokens = Array.from({ length: COUNT }, (_, i) => ({ tokenId: i + 1, ...documentOf(i + 1) }));
    const first = await put({ placeholder: { name: "Mystery" }, tokens });
    expect(first.status, first.text).to.equal(200);
    // `b` loads the collection and keeps it.
    for (let t = 1; t <= COUNT; t++) {
      const res = await served(apiB, t);
      expect(res.status, res.text).to.equal(200);
      expect(res.text).to.equal(canonicalize({ name: "Mystery" }));
    }
    const replaced = await put({ placeholder: { name: "Mystery, take two" } });
    expect(replaced.status, replaced.text).to.equal(200);
    const placeholderMs = await bServes(1, canonicalize({ name: "Mystery, take two" })!);

    const commit = await apiA.post(`/collections/${collection}/metadata/commit`, { privateKey: owner.privateKey });
    expect(commit.status, commit.text).to.equal(200);
    // The reveal waits for the reveal block the commit fixed, and a block after it.
    const head = BigInt(await provider.getBlockNumber());
    const due = (await nft.revealBlock()) + 1n;
    if (head < due) await provider.send("hardhat_mine", [`0x${(due - head).toString(16)}`]);
    const reveal = await apiA.post(`/collections/${collection}/reveal`, { privateKey: owner.privateKey });
    expect(reveal.status, reveal.text).to.equal(200);
    const startingIndex = BigInt(reveal.body.startingIndex as string);
    const revealMs = [];
    for (let t = 1; t <= COUNT; t++) {
      const uploaded = Number(((BigInt(t) - 1n + startingIndex) % BigInt(COUNT)) + 1n);
      revealMs.push(await bServes(t, canonicalize(documentOf(uploaded))!));
    }
    const state = await apiB.get(`/collections/${collection}/metadata`);
    expect(state.body.state).to.equal("revealed");
    expect(state.body.startingIndex).to.equal(startingIndex.toString());
    console.log(`      b served the new placeholder after ${placeholderMs} ms, the reveal after ${revealMs[0]} ms`);
  });
});
