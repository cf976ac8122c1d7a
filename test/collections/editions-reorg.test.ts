import { rmSync } from "node:fs";
import { expect } from "chai";
import { Wallet, type Contract, type JsonRpcProvider } from "ethers";
import { ApiClient, ChainNode, DEV_KEYS, ServiceProcess, directProvider, fundedWallet } from "../api/harness";
import { ChainControl } from "../support/chain-control";
import { seededDataDir } from "../support/pglite-template";
import { headOf, indexedAtHead, indexedTo, ROOT_KEY } from "./fixture";
import { deployEditionsDirectly, expectEditionsEqualChain } from "./editions-fixture";

describe("collections index: a reorg of ERC-1155 editions (evm_snapshot / evm_revert, other blocks mined in place)", function () {
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let chain: ChainControl;
  let service: ServiceProcess;
  let api: ApiClient;
  let dataDir: string;
  let editions: Contract;
  let address: string;
  let alice: Wallet;
  const [bob, carol] = [Wallet.createRandom().address, Wallet.createRandom().address];
  const IDS = [1n, 2n, 3n];

  before(async function () {
    this.timeout(120_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    chain = new ChainControl(node.rpcUrl);
    const owner = new Wallet(DEV_KEYS[8], provider);
    const start = await headOf(provider);
    editions = await deployEditionsDirectly(owner, 3);
    address = await editions.getAddress();
    alice = (await fundedWallet(provider)).connect(provider);
    dataDir = await seededDataDir("editions-reorg-");
    service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: { DATA_DIR: dataDir, BLOCK_POLL_MS: "100" } });
    api = new ApiClient(service.url);
    const res = await api.post("/collections", { address, fromBlock: start + 1 }, ROOT_KEY);
    expect(res.status, res.text).to.equal(201);
    await (await editions.mintForFree(1n, 10n, alice.address)).wait();
    await (await editions.mintForFree(2n, 4n, alice.address)).wait();
    await indexedTo(api, address, await headOf(provider));
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await node?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function expectSameAsChain(): Promise<void> {
    await indexedAtHead(api, address, provider);
    await expectEditionsEqualChain(api, editions, IDS, [alice.address, bob, carol]);
  }

  it("a longer branch replaces the blocks the index read: balances, supplies and holders roll back to the fork and equal the chain", async function () {
    this.timeout(90_000);
    const snapshot = await chain.snapshot();
    await (await editions.airdrop(3n, [bob, carol], [5n, 6n])).wait();
    const asAlice = editions.connect(alice) as Contract;
    await (await asAlice.safeBatchTransferFrom(alice.address, bob, [1n, 2n], [3n, 4n], "0x")).wait();
    await indexedTo(api, address, await headOf(provider));
    expect((await api.get(`/collections/${address}/wallets/${bob}`)).body.holdings).to.have.length(3);

    expect(await chain.revert(snapshot)).to.equal(true);
    await (await editions.mintForFree(3n, 2n, carol)).wait();
    await (await asAlice.safeTransferFrom(alice.address, carol, 2n, 1n, "0x")).wait();
    await chain.mine(2);
    await expectSameAsChain();
    expect(
      (await api.get(`/collections/${address}/wallets/${bob}`)).body.holdings,
      "bob's moves are gone",
    ).to.deep.equal([]);
    const two = await api.get(`/collections/${address}/tokens/2`);
    expect(two.body.transfers, "the reorged batch is gone from edition 2's moves").to.have.length(2);
  });

  it("a shorter branch (the head goes down) is followed as well", async function () {
    this.timeout(90_000);
    const snapshot = await chain.snapshot();
    await (await editions.mintForFree(1n, 9n, bob)).wait();
    await chain.mine(3);
    await indexedTo(api, address, await headOf(provider));

    expect(await chain.revert(snapshot)).to.equal(true);
    const asAlice = editions.connect(alice) as Contract;
    await (await asAlice.safeTransferFrom(alice.address, bob, 1n, 1n, "0x")).wait();
    await expectSameAsChain();
    expect((await api.get(`/collections/${address}/wallets/${bob}`)).body.holdings).to.deep.equal([
      { tokenId: "1", amount: "1" },
    ]);
  });
});
