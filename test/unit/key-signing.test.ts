import { expect } from "chai";
import { Transaction, Wallet, type TransactionRequest } from "ethers";
import { MemoryKey } from "../../server/chain/key-signing";

describe("signing a transaction with a key in memory (libsecp256k1)", function () {
  const wallets = [new Wallet(Wallet.createRandom().privateKey), new Wallet(`0x${"01".padStart(64, "0")}`)];
  const collection = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
  const transactions: Array<[string, TransactionRequest]> = [
    [
      "an EIP-1559 call",
      {
        chainId: 31337n,
        nonce: 7,
        to: collection,
        data: "0xa0712d680000000000000000000000000000000000000000000000000000000000000002",
        value: 2n * 10n ** 16n,
        gasLimit: 120_000n,
        type: 2,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      },
    ],
    [
      "a legacy call on chain 1",
      { chainId: 1n, nonce: 0, to: collection, data: "0x", value: 0n, gasLimit: 21_000n, type: 0, gasPrice: 5n },
    ],
    [
      "a deployment (no to)",
      {
        chainId: 31337n,
        nonce: 3,
        to: null,
        data: "0x6080604052",
        value: 0n,
        gasLimit: 3_000_000n,
        type: 2,
        maxFeePerGas: 10n,
        maxPriorityFeePerGas: 1n,
      },
    ],
  ];
  it("a key's address is ethers'; zero and the group order are no keys", function () {
    for (const wallet of wallets) expect(MemoryKey.fromHex(wallet.privateKey)!.address).to.equal(wallet.address);
    expect(MemoryKey.fromHex(`0x${"00".repeat(32)}`)).to.equal(null);
    expect(MemoryKey.fromHex("0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")).to.equal(null);
  });

  for (const [name, tx] of transactions) {
    it(`${name}: the same bytes as ethers' Wallet, from the signer's address`, async function () {
      for (const wallet of wallets) {
        for (let nonce = 0; nonce < 20; nonce++) {
          const request = { ...tx, nonce: Number(tx.nonce) + nonce };
          const raw = await MemoryKey.fromHex(wallet.privateKey)!.signTransaction(request);
          expect(raw).to.equal(await wallet.signTransaction(request));
          expect(Transaction.from(raw).from).to.equal(wallet.address);
        }
      }
    });
  }
});
