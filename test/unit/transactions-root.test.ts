import { expect } from "chai";
import { Wallet, keccak256, toQuantity, type TransactionRequest } from "ethers";
import hre from "hardhat";
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
