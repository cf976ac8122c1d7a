import { rmSync } from "node:fs";
import { expect } from "chai";
import { Wallet, getAddress, type Contract, type JsonRpcProvider } from "ethers";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  collectionAt,
  deployDirectly,
  directProvider,
  fundedWallet,
  sleep,
} from "../api/harness";
import { expectError } from "../api/expectations";
import { RpcProxy } from "../support/rpc-proxy";
import {
  capGetLogs,
  deployPlainErc721,
  expectIndexEqualsChain,
  headOf,
  indexedTo,
  indexedWallet,
  mineEmptyBlocks,
  ROOT_KEY,
} from "./fixture";
import { seededDataDir } from "../support/pglite-template";

const BATCHES = 20;
const BATCH = 1_000;

describe("collections index (PGlite, behind a node that caps eth_getLogs at 1,000 blocks and 2,000 logs)", function () {
  let node: ChainNode;
  let proxy: RpcProxy;
  let provider: JsonRpcProvider;
  let dataDir: string;
  let service: ServiceProcess | undefined;
  let api: ApiClient;
  let owner: Wallet;
  let nft: Contract;
  let address: string;
  let holders: Wallet[];
  // RPC_TIMEOUT_MS: this node answers behind a backfill's big eth_getLogs, and CI's Node 24 run once
  // waited over the harness's 10 s for one call (503 CHAIN_UNAVAILABLE) with four test processes on 2 cores.
  const env = () => ({ DATA_DIR: dataDir, BLOCK_POLL_MS: "200", TX_TIMEOUT_MS: "20000", RPC_TIMEOUT_MS: "30000" });

  before(async function () {
    // 20,000 tokens and 4,000 empty blocks: a minute alone, and four or more when the whole suite
    // runs beside it on two cores (two runtimes, two parts each).
    this.timeout(480_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    owner = new Wallet(DEV_KEYS[7], provider);
    address = await deployDirectly(owner, { maxSupply: 100_000n, maxMintAmountPerTx: 1_000n });
    nft = collectionAt(address, owner);
    holders = await Promise.all(Array.from({ length: 7 }, () => fundedWallet(provider)));
    // 20,000 tokens in batches of 1,000, with stretches of 1,000 empty blocks between some of them.
    for (let i = 0; i < BATCHES; i++) {
      await (await nft.mintForFree(BATCH, holders[i % holders.length].address)).wait();
      if (i % 5 === 4) await mineEmptyBlocks(node.rpcUrl, 1_000);
    }
    // Some tokens change hands, late tokens of a batch included.
    for (const [from, to, tokenId] of [
      [0, 1, 1n],
      [0, 2, 999n],
      [1, 3, 1_500n],
      [3, 0, 1_500n],
      [6, 5, 6_200n],
    ] as const) {
      const signer = holders[from].connect(provider);
      await (await collectionAt(address, signer).transferFrom(signer.address, holders[to].address, tokenId)).wait();
    }
    proxy = await RpcProxy.start(node.rpcUrl);
    dataDir = await seededDataDir("collections-test-");
    service = await ServiceProcess.start({ rpcUrl: proxy.url, env: env() });
    api = new ApiClient(service.url);
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await proxy?.close();
    await node?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("backfills 20,000 tokens through the node's refusals, and a restart mid-backfill resumes where it stood", async function () {
    this.timeout(180_000);
    const caps = capGetLogs(proxy, { maxBlocks: 1_000, maxLogs: 2_000 });
    const starts: number[] = [];
    proxy.judgeAnswers("eth_getLogs", (params) => {
      starts.push(Number((params[0] as { fromBlock: string }).fromBlock));
      return undefined;
    });
    proxy.latencyMs = 150; // slow enough to stop it half-way
    const head = await headOf(provider);

    const registered = await api.post("/collections", { address }, ROOT_KEY);
    expect(registered.status, registered.text).to.equal(201);
    expect(registered.body.address).to.equal(address);
    let seen = -1;
    let deployedBlock = -1;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      const res = await api.get(`/collections/${address}`);
      deployedBlock = res.body.deployedBlock ?? -1;
      if (res.body.indexedBlock !== null && res.body.indexedBlock >= deployedBlock + 1_000) {
        seen = res.body.indexedBlock as number;
        break;
      }
      await sleep(50);
    }
    expect(seen, "the backfill moved past its first ranges").to.be.greaterThan(deployedBlock);
    expect(seen, "and is not done yet").to.be.lessThan(head);
    await service!.kill();
    const before = starts.length;

    service = await ServiceProcess.start({ rpcUrl: proxy.url, env: env() });
    api = new ApiClient(service.url);
    proxy.latencyMs = 0;
    const done = await indexedTo(api, address, head, 120_000);
    const resumedFrom = starts.slice(before).find((from) => from <= head);
    expect(resumedFrom, "the first range after the restart").to.be.greaterThan(seen);
    expect(done.deployedBlock, "deployment block found on the chain").to.equal(deployedBlock);
    expect(done.name).to.equal("Reference Collection");
    expect(caps.refusals.blocks, "ranges refused for their span").to.be.greaterThan(0);
    expect(caps.refusals.logs, "ranges refused for their logs").to.be.greaterThan(0);
    caps.stop();
  });

  it("owners, wallets and token counts equal what the chain says (ownerOf sampled, balanceOf of every holder)", async function () {
    this.timeout(120_000);
    const sample = [1n, 2n, 999n, 1_000n, 1_001n, 1_500n, 6_200n, 19_999n, 20_000n];
    for (let i = 0; i < 30; i++) sample.push(BigInt(1 + Math.floor(Math.random() * BATCHES * BATCH)));
    await expectIndexEqualsChain(api, nft, { sample, supply: (await nft.totalSupply()) as bigint });
    const wallet = await indexedWallet(api, address, holders[1].address, 400);
    expect(wallet).to.deep.equal(((await nft.walletOfOwner(holders[1].address)) as bigint[]).map(String));

    const token = await api.get(`/collections/${address}/tokens/1500`);
    expect(token.body.transfers.map((t: { to: string }) => t.to)).to.deep.equal([
      holders[1].address,
      holders[3].address,
      holders[0].address,
    ]);
    expect(token.body.transfers[0].from).to.equal("0x0000000000000000000000000000000000000000");
    expect(token.body.mintedBlock).to.equal(token.body.transfers[0].blockNumber);
    expect(token.body.blockNumber).to.be.a("number");
  });

  it("read-your-writes: a mint's tokenIds are in /nft/total-supply right after it answers, and with ?minBlock=", async function () {
    this.timeout(60_000);
    const minter = await fundedWallet(provider);
    const mint = await api.post("/nft/mint", {
      privateKey: minter.privateKey,
      contractAddress: address,
      mintAmount: 3,
    });
    expect(mint.status, mint.text).to.equal(200);
    const supply = await api.post("/nft/total-supply", { privateKey: minter.privateKey, contractAddress: address });
    expect(supply.status, supply.text).to.equal(200);
    expect(supply.body.wallet.tokenIds).to.deep.equal(mint.body.tokenIds);

    const gift = await api.post("/nft/mintForFree", {
      privateKey: owner.privateKey,
      contractAddress: address,
      mintAmount: 2,
      receiver: minter.address,
    });
    expect(gift.status, gift.text).to.equal(200);
    const wallet = await api.get(`/collections/${address}/wallets/${minter.address}?minBlock=${gift.body.blockNumber}`);
    expect(wallet.status, wallet.text).to.equal(200);
    expect(wallet.body.tokenIds).to.deep.equal([...mint.body.tokenIds, ...gift.body.tokenIds]);
    expect(wallet.body.balance).to.equal("5");
    expect(wallet.body.blockNumber).to.be.at.least(gift.body.blockNumber);
  });

  it("while the index is held back, /nft/total-supply reads the wallet from the chain in pieces", async function () {
    this.timeout(60_000);
    proxy.refuse("eth_getLogs", { times: Infinity, error: { code: -32000, message: "backend unavailable" } });
    try {
      await (await nft.mintForFree(5, holders[2].address)).wait();
      const res = await api.post("/nft/total-supply", { privateKey: holders[2].privateKey, contractAddress: address });
      expect(res.status, res.text).to.equal(200);
      const chain = ((await nft.walletOfOwner(holders[2].address)) as bigint[]).map(String);
      expect(res.body.wallet.tokenIds).to.deep.equal(chain);
      expect(res.body.totalSupply).to.equal(((await nft.totalSupply()) as bigint).toString());
    } finally {
      proxy.clearRules();
    }
    await indexedTo(api, address, await headOf(provider));
  });

  it("an OpenZeppelin ERC721 the service did not deploy: registered, indexed (mints, transfers, burns) and read", async function () {
    this.timeout(60_000);
    const [alice, bob] = [holders[4].connect(provider), holders[5].connect(provider)];
    const plain = await deployPlainErc721(alice);
    const plainAddress = await plain.getAddress();
    for (const id of [1, 2, 3, 4, 5]) await (await plain.mint(alice.address, id)).wait();
    await (await plain.transferFrom(alice.address, bob.address, 2)).wait();
    await (await plain.burn(3)).wait();

    const registered = await api.post("/collections", { address: plainAddress }, ROOT_KEY);
    expect(registered.status, registered.text).to.equal(201);
    expect((await api.post("/collections", { address: plainAddress }, ROOT_KEY)).status, "registered again").to.equal(
      200,
    );
    const view = await indexedTo(api, plainAddress, await headOf(provider));
    expect(view).to.include({ name: "Plain", symbol: "PLN", totalSupply: "4", holders: 2 });

    const two = await api.get(`/collections/${plainAddress}/tokens/2`);
    expect(two.body).to.include({ tokenId: "2", owner: bob.address, burned: false });
    expect(two.body.transfers.map((t: { to: string }) => t.to)).to.deep.equal([alice.address, bob.address]);
    const three = await api.get(`/collections/${plainAddress}/tokens/3`);
    expect(three.body).to.include({ owner: null, burned: true });
    expect(await indexedWallet(api, plainAddress, alice.address)).to.deep.equal(["1", "4", "5"]);
    await expectIndexEqualsChain(api, plain, { sample: [1n, 2n, 4n, 5n] });

    const supply = await api.post("/nft/total-supply", { privateKey: alice.privateKey, contractAddress: plainAddress });
    expect(supply.status, supply.text).to.equal(200);
    expect(supply.body).to.deep.equal({
      totalSupply: "4",
      wallet: { address: alice.address, tokenIds: ["1", "4", "5"] },
    });
  });

  it("answers 404 COLLECTION_NOT_FOUND for what it does not index or is no ERC-721, 404 TOKEN_NOT_FOUND, 400 for a bad cursor", async function () {
    const stranger = getAddress(Wallet.createRandom().address);
    expectError(await api.get(`/collections/${stranger}`), 404, "COLLECTION_NOT_FOUND");
    expectError(await api.get(`/collections/${stranger}/owners`), 404, "COLLECTION_NOT_FOUND");
    expectError(await api.post("/collections", { address: stranger }, ROOT_KEY), 404, "COLLECTION_NOT_FOUND");
    expectError(await api.get(`/collections/${address}/tokens/999999`), 404, "TOKEN_NOT_FOUND");
    expectError(await api.get(`/collections/${address}/owners?cursor=nope`), 400, "VALIDATION_ERROR");
    expectError(await api.get(`/collections/not-an-address`), 400, "VALIDATION_ERROR");
  });

  it("?minBlock= past what the index reaches within 5 s answers 503 INDEX_BEHIND with Retry-After", async function () {
    this.timeout(20_000);
    const started = Date.now();
    const res = await api.get(`/collections/${address}/owners?minBlock=${(await headOf(provider)) + 100}`);
    expectError(res, 503, "INDEX_BEHIND");
    expect(res.headers.get("retry-after")).to.equal("1");
    expect(Date.now() - started).to.be.within(4_500, 9_000);
  });
});
