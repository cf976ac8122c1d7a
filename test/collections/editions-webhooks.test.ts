/**
 * collection.transfer of ERC-1155 editions, to a receiver in this process: each id a TransferSingle
 * or TransferBatch moved is one event with its tokenId and amount, signed as every event is, and
 * an endpoint's wallets filter takes the moves to or from its wallets.
 */
import { rmSync } from "node:fs";
import { expect } from "chai";
import { Wallet, ZeroAddress, getAddress, type Contract, type JsonRpcProvider } from "ethers";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  TEST_API_KEY,
  directProvider,
  fundedWallet,
  usedSecrets,
} from "../api/harness";
import { ChainControl } from "../support/chain-control";
import { seededDataDir } from "../support/pglite-template";
import { Receiver, type Delivery } from "../webhooks/receiver";
import { headOf, indexedTo, ROOT_KEY } from "./fixture";
import { deployEditionsDirectly } from "./editions-fixture";

const ROOT = { authorization: `Bearer ${TEST_API_KEY}` };

describe("collection.transfer of ERC-1155 editions (PGlite, a real chain, a real receiver)", function () {
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let chain: ChainControl;
  let service: ServiceProcess;
  let api: ApiClient;
  let receiver: Receiver;
  let dataDir: string;
  let editions: Contract;
  let address: string;
  let alice: Wallet;
  const [bob, carol] = [Wallet.createRandom().address, Wallet.createRandom().address];

  before(async function () {
    this.timeout(120_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    chain = new ChainControl(node.rpcUrl);
    const owner = new Wallet(DEV_KEYS[5], provider);
    const start = await headOf(provider);
    editions = await deployEditionsDirectly(owner, 2);
    address = await editions.getAddress();
    alice = (await fundedWallet(provider)).connect(provider);
    dataDir = await seededDataDir("editions-webhooks-");
    [service, receiver] = await Promise.all([
      ServiceProcess.start({
        rpcUrl: node.rpcUrl,
        env: { DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: "true", BLOCK_POLL_MS: "100" },
      }),
      Receiver.start(),
    ]);
    api = new ApiClient(service.url);
    const res = await api.post("/collections", { address, fromBlock: start + 1 }, ROOT_KEY);
    expect(res.status, res.text).to.equal(201);
    await (await editions.mintForFree(1n, 10n, alice.address)).wait();
    await (await editions.mintForFree(2n, 6n, alice.address)).wait();
    await indexedTo(api, address, await headOf(provider));
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await receiver?.close();
    await node?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("one event per id and holder of a batch and an airdrop, with tokenId and amount; a wallets filter takes those to or from its wallets", async function () {
    this.timeout(120_000);
    const subscribe = async (path: string, filter: Record<string, unknown>) => {
      const made = await api.request("POST", "/webhooks", {
        json: { url: `${receiver.url}${path}`, events: ["collection.transfer"], ...filter },
        headers: ROOT,
      });
      expect(made.status, made.text).to.equal(201);
      usedSecrets.add(made.body.secret as string);
      return made.body.secret as string;
    };
    const secret = await subscribe("/all", { collections: [address] });
    await subscribe("/carol", { wallets: [carol] });

    const asAlice = editions.connect(alice) as Contract;
    const batch = await (await asAlice.safeBatchTransferFrom(alice.address, bob, [1n, 2n], [3n, 6n], "0x")).wait();
    const airdrop = await (await editions.airdrop(1n, [bob, carol], [2n, 5n])).wait();
    await chain.mine(3); // CONFIRMATIONS deep
    const of = (hash: string) => (d: Delivery[]) =>
      d.filter((x) => x.path.endsWith("/all") && x.json.data.transactionHash === hash);
    const delivered = await receiver.until(
      (d) =>
        of(batch!.hash)(d).length >= 2 && of(airdrop!.hash)(d).length >= 2 && d.some((x) => x.path.endsWith("/carol")),
      60_000,
      "the batch's and the airdrop's moves",
    );
    const moves = (hash: string) =>
      of(hash)(delivered)
        .map((x) => x.json.data)
        .sort((a, b) => Number(a.logIndex) - Number(b.logIndex) || Number(a.tokenId) - Number(b.tokenId))
        .map((data) => ({ tokenId: data.tokenId, amount: data.amount, from: data.from, to: data.to }));
    expect(moves(batch!.hash), "a TransferBatch: one event per id").to.deep.equal([
      { tokenId: "1", amount: "3", from: alice.address, to: getAddress(bob) },
      { tokenId: "2", amount: "6", from: alice.address, to: getAddress(bob) },
    ]);
    expect(moves(airdrop!.hash), "an airdrop: one event per holder").to.deep.equal([
      { tokenId: "1", amount: "2", from: ZeroAddress, to: getAddress(bob) },
      { tokenId: "1", amount: "5", from: ZeroAddress, to: getAddress(carol) },
    ]);
    const one = of(batch!.hash)(delivered)[0];
    expect(one.json.data).to.include({ chainId: "31337", collection: address, blockNumber: batch!.blockNumber });
    Receiver.verify(secret, one);
    // Only Carol's: the wallets filter reads an edition's move as it reads an ERC-721 transfer.
    const toCarol = delivered.filter((x) => x.path.endsWith("/carol"));
    expect(toCarol.map((x) => [x.json.data.to, x.json.data.amount])).to.deep.equal([[getAddress(carol), "5"]]);
    // Each move once: ids told apart within a batch (the same log), never collapsed or doubled.
    const ids = of(batch!.hash)(delivered).map((x) => x.id);
    expect(new Set(ids).size).to.equal(ids.length);
  });
});
