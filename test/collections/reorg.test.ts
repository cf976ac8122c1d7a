import { rmSync } from "node:fs";
import { expect } from "chai";
import { Wallet, type Contract, type JsonRpcProvider } from "ethers";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  collectionAt,
  deployDirectly,
  directProvider,
  fundedWallet,
} from "../api/harness";
import { ChainControl } from "../support/chain-control";
import { expectIndexEqualsChain, headOf, indexedAtHead, indexedTo, indexedWallet, ROOT_KEY } from "./fixture";
import { seededDataDir } from "../support/pglite-template";

describe("collections index: a reorg (evm_snapshot / evm_revert, other blocks mined in place)", function () {
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let chain: ChainControl;
  let service: ServiceProcess;
  let api: ApiClient;
  let dataDir: string;
  let nft: Contract;
  let address: string;
  let alice: Wallet;
  const [bob, carol] = [Wallet.createRandom().address, Wallet.createRandom().address];

  before(async function () {
    this.timeout(120_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    chain = new ChainControl(node.rpcUrl);
    const owner = new Wallet(DEV_KEYS[8], provider);
    address = await deployDirectly(owner, { maxMintAmountPerTx: 100n });
    nft = collectionAt(address, owner);
    alice = (await fundedWallet(provider)).connect(provider);
    dataDir = await seededDataDir("collections-reorg-");
    service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: { DATA_DIR: dataDir, BLOCK_POLL_MS: "100" } });
    api = new ApiClient(service.url);
    const deployed = await provider.getTransactionReceipt(
      (await provider.send("eth_getBlockByNumber", ["0x1", false])).transactions[0],
    );
    const res = await api.post("/collections", { address, fromBlock: deployed!.blockNumber }, ROOT_KEY);
    expect(res.status, res.text).to.equal(201);
    await (await nft.mintForFree(5, alice.address)).wait();
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
    await expectIndexEqualsChain(api, nft, { supply: (await nft.totalSupply()) as bigint, sample: [1n, 2n, 5n] });
    for (const holder of [alice.address, bob, carol]) {
      const chainWallet = ((await nft.walletOfOwner(holder)) as bigint[]).map(String);
      expect(await indexedWallet(api, address, holder), `wallet of ${holder}`).to.deep.equal(chainWallet);
    }
  }

  it("a longer branch replaces the blocks the index read: it rolls back to the fork and equals the chain", async function () {
    this.timeout(90_000);
    const snapshot = await chain.snapshot();
    await (await nft.mintForFree(3, bob)).wait();
    await (await collectionAt(address, alice).transferFrom(alice.address, bob, 1n)).wait();
    await indexedTo(api, address, await headOf(provider));
    expect(await indexedWallet(api, address, bob)).to.have.length(4);

    expect(await chain.revert(snapshot)).to.equal(true);
    await (await nft.mintForFree(4, carol)).wait();
    await (await collectionAt(address, alice).transferFrom(alice.address, carol, 2n)).wait();
    await chain.mine(2);
    await expectSameAsChain();
    const one = await api.get(`/collections/${address}/tokens/1`);
    expect(one.body.transfers, "the reorged transfer is gone from token 1's history").to.have.length(1);
    const six = await api.get(`/collections/${address}/tokens/6`);
    expect(six.body.owner, "token 6 went to carol on the new branch").to.equal(carol);
  });

  it("a shorter branch (the head goes down) is followed as well", async function () {
    this.timeout(90_000);
    const snapshot = await chain.snapshot();
    await (await nft.mintForFree(2, bob)).wait();
    await chain.mine(3);
    await indexedTo(api, address, await headOf(provider));

    expect(await chain.revert(snapshot)).to.equal(true);
    await (await collectionAt(address, alice).transferFrom(alice.address, bob, 3n)).wait();
    await expectSameAsChain();
    expect(await indexedWallet(api, address, bob)).to.deep.equal(["3"]);
  });
});
