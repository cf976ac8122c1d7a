import { rmSync } from "node:fs";
import { expect } from "chai";
import { Contract, Wallet, getAddress, type JsonRpcProvider } from "ethers";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  deployDirectly,
  directProvider,
  fundedWallet,
} from "../api/harness";
import { expectError } from "../api/expectations";
import { seededDataDir } from "../support/pglite-template";
import { editionTransfers, TRANSFER_BATCH_TOPIC, TRANSFER_SINGLE_TOPIC } from "../../server/collections/edition-events";
import { headOf, indexedTo, ROOT_KEY } from "./fixture";
import { deployBareErc1155, deployEditionsDirectly, expectEditionsEqualChain } from "./editions-fixture";

const ZERO_TOPIC = `0x${"0".repeat(64)}`;

describe("collections index: ERC-1155 editions (TransferSingle, TransferBatch), PGlite", function () {
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let service: ServiceProcess;
  let api: ApiClient;
  let dataDir: string;
  let owner: Wallet;
  let editions: Contract;
  let bare: Contract;
  let editionsAddress: string;
  let bareAddress: string;
  let alice: Wallet;
  let bob: Wallet;
  const carol = Wallet.createRandom().address;

  before(async function () {
    this.timeout(180_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    owner = new Wallet(DEV_KEYS[6], provider);
    const start = await headOf(provider);
    editions = await deployEditionsDirectly(owner, 3);
    bare = await deployBareErc1155(owner);
    editionsAddress = await editions.getAddress();
    bareAddress = await bare.getAddress();
    [alice, bob] = (await Promise.all([fundedWallet(provider), fundedWallet(provider)])).map((w) =>
      w.connect(provider),
    );
    dataDir = await seededDataDir("editions-index-");
    // RPC_TIMEOUT_MS: a loaded CI machine's node took over the default 5 s once (a 503 here); no timeout is tested here.
    service = await ServiceProcess.start({
      rpcUrl: node.rpcUrl,
      env: { DATA_DIR: dataDir, BLOCK_POLL_MS: "100", RPC_TIMEOUT_MS: "20000" },
    });
    api = new ApiClient(service.url);
    for (const address of [editionsAddress, bareAddress]) {
      const res = await api.post("/collections", { address, fromBlock: start + 1 }, ROOT_KEY);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.standard).to.equal("erc1155");
    }
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await node?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("mints, an airdrop and a batch transfer of the reference contract: balances per holder and edition, supply and holders, as the chain says", async function () {
    this.timeout(120_000);
    await (await editions.mintForFree(1n, 10n, alice.address)).wait();
    await (await editions.mintForFree(2n, 5n, alice.address)).wait();
    await (await editions.airdrop(1n, [bob.address, carol], [3n, 4n])).wait();
    const asAlice = editions.connect(alice) as Contract;
    // Alice gives Bob all of edition 2 and some of 1 in one TransferBatch: she no longer holds edition 2.
    await (await asAlice.safeBatchTransferFrom(alice.address, bob.address, [1n, 2n], [2n, 5n], "0x")).wait();
    // Amount 0 changes nothing (and edition 3, only created, has no holder and no supply).
    await (await asAlice.safeTransferFrom(alice.address, carol, 1n, 0n, "0x")).wait();
    await indexedTo(api, editionsAddress, await headOf(provider));

    await expectEditionsEqualChain(api, editions, [1n, 2n, 3n], [alice.address, bob.address, carol, owner.address]);
    const view = (await api.get(`/collections/${editionsAddress}`)).body;
    expect(view).to.include({ standard: "erc1155", totalSupply: "22", holders: 3, name: "Editions", symbol: "ED" });
    expect(view.editions).to.deep.equal([
      { tokenId: "1", supply: "17", holders: 3 },
      { tokenId: "2", supply: "5", holders: 1 },
    ]);

    const one = await api.get(`/collections/${editionsAddress}/tokens/1`);
    expect(one.status, one.text).to.equal(200);
    expect(one.body).to.include({ tokenId: "1", supply: "17", holders: 3 });
    expect(one.body.owners).to.deep.equal(
      [
        { address: alice.address, amount: "8" },
        { address: getAddress(carol), amount: "4" },
        { address: bob.address, amount: "5" },
      ].sort((a, b) => Number(b.amount) - Number(a.amount)),
    );
    expect(
      one.body.transfers.map((t: { from: string; to: string; amount: string }) => [t.from, t.to, t.amount]),
      "every move of edition 1, oldest first, the 0-amount one left out",
    ).to.deep.equal([
      [getAddress(ZERO_TOPIC.slice(0, 42)), alice.address, "10"],
      [getAddress(ZERO_TOPIC.slice(0, 42)), bob.address, "3"],
      [getAddress(ZERO_TOPIC.slice(0, 42)), getAddress(carol), "4"],
      [alice.address, bob.address, "2"],
    ]);
    // Paged: one move at a time, the batch's ids told apart.
    const page = await api.get(`/collections/${editionsAddress}/tokens/2?limit=1`);
    expect(page.body.transfers).to.have.length(1);
    const next = await api.get(`/collections/${editionsAddress}/tokens/2?limit=1&cursor=${page.body.cursor}`);
    expect(next.body.transfers[0]).to.include({ from: alice.address, to: bob.address, amount: "5" });

    const owners = await api.get(`/collections/${editionsAddress}/owners`);
    expect(owners.body.owners).to.deep.equal(
      [
        { address: alice.address, tokens: "8", amount: "8", editions: 1 },
        { address: bob.address, tokens: "10", amount: "10", editions: 2 },
        { address: getAddress(carol), tokens: "4", amount: "4", editions: 1 },
      ].sort((a, b) => Number(b.amount) - Number(a.amount)),
    );
    const wallet = await api.get(`/collections/${editionsAddress}/wallets/${bob.address}`);
    expect(wallet.body).to.include({ balance: "10" });
    expect(wallet.body.tokenIds).to.deep.equal(["1", "2"]);
    expect(wallet.body.holdings).to.deep.equal([
      { tokenId: "1", amount: "5" },
      { tokenId: "2", amount: "5" },
    ]);

    await expectError(await api.get(`/collections/${editionsAddress}/tokens/3`), 404, "TOKEN_NOT_FOUND");
  });

  it("a bare OpenZeppelin ERC1155Supply is indexed alike: mints of any id, single and batch transfers", async function () {
    this.timeout(120_000);
    const asAlice = bare.connect(alice) as Contract;
    const asBob = bare.connect(bob) as Contract;
    await (await asAlice.mint(7n, 30n)).wait();
    await (await asAlice.mint(2n ** 200n, 1n)).wait();
    await (await asBob.mint(7n, 4n)).wait();
    await (await asAlice.safeBatchTransferFrom(alice.address, carol, [7n, 2n ** 200n], [30n, 1n], "0x")).wait();
    await (await asBob.safeTransferFrom(bob.address, alice.address, 7n, 1n, "0x")).wait();
    await indexedTo(api, bareAddress, await headOf(provider));
    await expectEditionsEqualChain(api, bare, [7n, 2n ** 200n], [alice.address, bob.address, carol]);
    const view = (await api.get(`/collections/${bareAddress}`)).body;
    expect(view).to.include({ standard: "erc1155", totalSupply: "35", holders: 3 });
  });

  it("an ERC-721 says so, answers as before, and refuses ?tokenId= on its owners naming tokenId", async function () {
    this.timeout(60_000);
    const address = await deployDirectly(owner);
    const res = await api.post("/collections", { address, fromBlock: await headOf(provider) }, ROOT_KEY);
    expect(res.status, res.text).to.equal(201);
    expect(res.body.standard).to.equal("erc721");
    const view = (await api.get(`/collections/${address}`)).body;
    expect(view.standard).to.equal("erc721");
    expect(view).to.not.have.property("editions");
    const refused = await api.get(`/collections/${address}/owners?tokenId=1`);
    await expectError(refused, 400, "VALIDATION_ERROR");
    expect(refused.text).to.contain("tokenId");
  });

  it("reads TransferSingle and TransferBatch of any contract, and leaves out moves that change nothing", function () {
    const place = { collectionId: 1, blockNumber: 5, blockHash: "0xb", logIndex: 2, transactionHash: "0xt" };
    const topic = (address: string) => `0x${address.slice(2).toLowerCase().padStart(64, "0")}`;
    const words = (...values: bigint[]) => `0x${values.map((v) => v.toString(16).padStart(64, "0")).join("")}`;
    const from = topic(alice.address);
    const to = topic(carol);
    const single = (f: string, t: string, id: bigint, amount: bigint) =>
      editionTransfers({ topics: [TRANSFER_SINGLE_TOPIC, from, f, t], data: words(id, amount) }, place);
    expect(single(from, to, 9n, 3n)).to.deep.equal([
      {
        ...place,
        batchIndex: 0,
        from: alice.address.toLowerCase(),
        to: carol.toLowerCase(),
        tokenId: "9",
        amount: "3",
      },
    ]);
    expect(single(from, to, 9n, 0n), "amount 0").to.deep.equal([]);
    expect(single(ZERO_TOPIC, ZERO_TOPIC, 9n, 4n), "zero to zero").to.deep.equal([]);
    const batch = editionTransfers(
      { topics: [TRANSFER_BATCH_TOPIC, from, from, to], data: words(64n, 160n, 2n, 1n, 2n, 2n, 5n, 0n) },
      place,
    );
    expect(batch!.map((m) => [m.batchIndex, m.tokenId, m.amount])).to.deep.equal([[0, "1", "5"]]);
    const truncated = editionTransfers(
      { topics: [TRANSFER_BATCH_TOPIC, from, from, to], data: words(64n, 160n, 2n, 1n) },
      place,
    );
    expect(truncated, "data that does not fit the event is none").to.equal(undefined);
  });
});
