import { expect } from "chai";
import { Wallet, keccak256, toQuantity, type TransactionRequest } from "ethers";
import hre from "hardhat";
import { OwnBlocks, type OwnTransaction, type RootedHeader } from "../../server/chain/own-blocks";
import { parseReceipt } from "../../server/chain/receipt";
import { EMPTY_TRIE_ROOT, transactionsRoot } from "../../server/chain/transactions-root";

/** The root computed from the signed transactions, against the in-process network's own headers. */
describe("transactionsRoot: the ordered trie root of a block's signed transactions", function () {
  const provider = hre.network.provider;
  const send = <T>(method: string, params: unknown[] = []) => provider.request({ method, params }) as Promise<T>;
  let snapshot: string;
  const raws = new Map<string, string>(); // hash -> signed bytes
  const wallets = Array.from({ length: 3 }, () => new Wallet(Wallet.createRandom().privateKey));
  const nonces = new Map<string, number>();

  before(async function () {
    snapshot = await send<string>("evm_snapshot");
    for (const w of wallets) await send("hardhat_setBalance", [w.address, toQuantity(10n ** 21n)]);
    await send("evm_setAutomine", [false]);
  });

  after(async function () {
    await send("evm_setAutomine", [true]);
    await send("evm_revert", [snapshot]);
  });

  /** Signs and sends one transaction of `type` (0 legacy, 1 EIP-2930, 2 EIP-1559) from wallet `w`. */
  async function sendTx(w: Wallet, type: 0 | 1 | 2, data = "0x"): Promise<void> {
    const nonce = nonces.get(w.address) ?? 0;
    nonces.set(w.address, nonce + 1);
    const base: TransactionRequest = {
      chainId: 31337n,
      nonce,
      to: wallets[0].address,
      value: 1n,
      data,
      gasLimit: 60_000n,
    };
    const fees: TransactionRequest =
      type === 2 ? { maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n } : { gasPrice: 10n ** 11n };
    const raw = await w.signTransaction({ ...base, ...fees, type, ...(type === 1 ? { accessList: [] } : {}) });
    raws.set(keccak256(raw), raw);
    await send("eth_sendRawTransaction", [raw]);
  }

  /** Mines a block of what was sent; its header's root and the one computed from its transactions' bytes. */
  async function mineAndCompare(expected: number): Promise<void> {
    await send("evm_mine");
    const block = await send<{ transactions: string[]; transactionsRoot: string }>("eth_getBlockByNumber", [
      "latest",
      false,
    ]);
    expect(block.transactions).to.have.length(expected);
    const ordered = block.transactions.map((hash) => raws.get(hash)!);
    expect(transactionsRoot(ordered)).to.equal(block.transactionsRoot);
    if (ordered.length > 1) expect(transactionsRoot([...ordered].reverse())).to.not.equal(block.transactionsRoot);
  }

  it("a block without transactions", async function () {
    await mineAndCompare(0);
    expect(transactionsRoot([])).to.equal(EMPTY_TRIE_ROOT);
  });

  it("a block of one EIP-1559 transaction, and of one legacy one", async function () {
    await sendTx(wallets[0], 2);
    await mineAndCompare(1);
    await sendTx(wallets[1], 0, "0x1234");
    await mineAndCompare(1);
  });

  it("a block of two (legacy and EIP-2930), and of three types", async function () {
    await sendTx(wallets[0], 0);
    await sendTx(wallets[1], 1);
    await mineAndCompare(2);
    await sendTx(wallets[0], 2);
    await sendTx(wallets[1], 0);
    await sendTx(wallets[2], 1);
    await mineAndCompare(3);
  });

  it("a block of 131 transactions of mixed types (indexes past 127 and 255 take longer keys)", async function () {
    for (let i = 0; i < 131; i++) await sendTx(wallets[i % 3], ([0, 1, 2] as const)[i % 3], i % 2 ? "0xabcdef" : "0x");
    await mineAndCompare(131);
  });

  it("a block of 260 transactions", async function () {
    for (let i = 0; i < 260; i++) await sendTx(wallets[i % 3], i % 2 ? 2 : 0);
    await mineAndCompare(260);
  });
});

/** OwnBlocks against the in-process network: a block is proven only when it holds our transactions alone. */
describe("OwnBlocks: every log of a block that holds only our transactions", function () {
  const provider = hre.network.provider;
  const send = <T>(method: string, params: unknown[] = []) => provider.request({ method, params }) as Promise<T>;
  const ours = Array.from({ length: 2 }, () => new Wallet(Wallet.createRandom().privateKey));
  const nonces = new Map<string, number>();
  let snapshot: string;
  let collection: string;

  async function signed(w: Wallet, tx: TransactionRequest): Promise<string> {
    const nonce = nonces.get(w.address) ?? 0;
    nonces.set(w.address, nonce + 1);
    const fees = { maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n, type: 2 };
    return w.signTransaction({ chainId: 31337n, nonce, gasLimit: 6_000_000n, value: 0n, ...fees, ...tx });
  }

  /** Sends `raws`, mines them into one block; its header and our transactions (those of `known`) in it. */
  async function mined(raws: string[], known = raws): Promise<{ header: RootedHeader; txs: OwnTransaction[] }> {
    for (const raw of raws) await send("eth_sendRawTransaction", [raw]);
    await send("evm_mine");
    const block = await send<{ number: string; hash: string; transactionsRoot: string }>("eth_getBlockByNumber", [
      "latest",
      false,
    ]);
    const header = { number: Number(block.number), hash: block.hash, transactionsRoot: block.transactionsRoot };
    const txs: OwnTransaction[] = [];
    for (const raw of known) {
      const receipt = parseReceipt(await send("eth_getTransactionReceipt", [keccak256(raw)]))!;
      txs.push({ receipt, raw });
    }
    return { header, txs };
  }

  const mintData = (amount: number) => `0xa0712d68${amount.toString(16).padStart(64, "0")}`; // mint(uint256)

  before(async function () {
    snapshot = await send<string>("evm_snapshot");
    for (const w of ours) await send("hardhat_setBalance", [w.address, toQuantity(10n ** 21n)]);
    await send("evm_setAutomine", [false]);
    const factory = await hre.ethers.getContractFactory("NFTCollection");
    const deploy = await factory.getDeployTransaction("O", "O", "ipfs://x/", 0n, 1000n, 10n);
    const { header, txs } = await mined([await signed(ours[0], { data: deploy.data })]);
    collection = txs[0].receipt.contractAddress!;
    expect(header.number).to.be.greaterThan(0);
  });

  after(async function () {
    await send("evm_setAutomine", [true]);
    await send("evm_revert", [snapshot]);
  });

  it("proves a block of our mints alone, with the logs eth_getLogs gives for it", async function () {
    const raws = [
      await signed(ours[0], { to: collection, data: mintData(2) }),
      await signed(ours[1], { to: collection, data: mintData(3) }),
    ];
    const { header, txs } = await mined(raws);
    const own = new OwnBlocks((n) => (n === header.number ? header : undefined));
    const done = own.looking(header.number);
    const asked = own.logsOf(header); // waits for the pass
    expect(own.prove([...txs].reverse()).map((b) => b.hash)).to.deep.equal([header.hash]);
    done();
    const logs = (await asked)!;
    const fromNode = await send<Array<Record<string, unknown>>>("eth_getLogs", [{ blockHash: header.hash }]);
    expect(logs).to.have.length(5);
    const shape = (log: Record<string, unknown>) => ({
      address: String(log.address).toLowerCase(),
      topics: log.topics,
      data: log.data,
      blockNumber: log.blockNumber,
      blockHash: String(log.blockHash).toLowerCase(),
      transactionHash: String(log.transactionHash).toLowerCase(),
      logIndex: log.logIndex,
    });
    expect(logs.map((log) => shape({ ...log }))).to.deep.equal(fromNode.map(shape));
  });

  it("does not prove a block with a transaction that is not ours, nor a header without its root", async function () {
    const stranger = await signed(ours[1], { to: collection, data: mintData(1) });
    const raws = [await signed(ours[0], { to: collection, data: mintData(1) }), stranger];
    const { header, txs } = await mined(raws, raws.slice(0, 1));
    const own = new OwnBlocks((n) => (n === header.number ? header : undefined));
    expect(own.prove(txs)).to.deep.equal([]);
    expect(await own.logsOf(header)).to.equal(undefined);
    // With both, proven; without the header's root, not.
    const both = await Promise.all(
      raws.map(async (raw) => ({
        raw,
        receipt: parseReceipt(await send("eth_getTransactionReceipt", [keccak256(raw)]))!,
      })),
    );
    expect(new OwnBlocks(() => header).prove(both)).to.have.length(1);
    expect(new OwnBlocks(() => ({ number: header.number, hash: header.hash })).prove(both)).to.deep.equal([]);
    // A header of another block at that height (a reorg): not proven.
    expect(new OwnBlocks(() => ({ ...header, hash: keccak256("0x01") })).prove(both)).to.deep.equal([]);
  });

  it("a receipt read before the feed has its block's header (automining) is proven when the header comes", async function () {
    const { header, txs } = await mined([await signed(ours[0], { to: collection, data: mintData(1) })]);
    const feed: { known?: RootedHeader } = {};
    const own = new OwnBlocks((n) => (n === header.number ? feed.known : undefined));
    const learnt: number[] = [];
    own.onProven((block) => learnt.push(block.number));
    expect(own.prove(txs)).to.deep.equal([]);
    expect(await own.logsOf(header)).to.equal(undefined);
    // Another block's header proves nothing; its own does, once.
    own.headersRead([{ number: header.number + 1, hash: keccak256("0x02") }]);
    expect(learnt).to.deep.equal([]);
    feed.known = header;
    own.headersRead([header]);
    own.headersRead([header]);
    expect(learnt).to.deep.equal([header.number]);
    expect((await own.logsOf(header))!.map((log) => log.transactionHash)).to.deep.equal(
      txs[0].receipt.logs.map(() => txs[0].receipt.hash.toLowerCase()),
    );
  });
});
