import { expect } from "chai";
import { ethers } from "hardhat";
import fc from "fast-check";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployCollection } from "./fixtures";

const ACCOUNTS = 5;
const MAX_SUPPLY = 40;
const MAX_PER_TX = 5;
const PRICE = 1n; // 1 wei, so paid mints run through the payment path

type Op = { kind: "mint"; who: number; amount: number } | { kind: "transfer"; pick: number; to: number; safe: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("mint" as const),
    who: fc.integer({ min: 0, max: ACCOUNTS - 1 }),
    amount: fc.integer({ min: 1, max: MAX_PER_TX }),
  }),
  fc.record({
    kind: fc.constant("transfer" as const),
    pick: fc.nat(),
    to: fc.integer({ min: 0, max: ACCOUNTS - 1 }),
    safe: fc.boolean(),
  }),
);

async function propertyFixture() {
  const signers = (await ethers.getSigners()).slice(0, ACCOUNTS);
  const nft = await deployCollection({ cost: PRICE, maxSupply: BigInt(MAX_SUPPLY), maxPerTx: BigInt(MAX_PER_TX) });
  return { nft, signers };
}

describe("NFTCollection: properties over random mints and transfers", function () {
  it("keeps supply, balances, wallets and owners consistent", async function () {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 24 }), async (ops) => {
        const { nft, signers } = await loadFixture(propertyFixture);
        const addresses = signers.map((s) => s.address);
        const owners: string[] = []; // model: owners[id - 1] is the holder of token id

        for (const op of ops) {
          if (op.kind === "mint") {
            const call = nft.connect(signers[op.who]).mint(op.amount, { value: PRICE * BigInt(op.amount) });
            const remaining = MAX_SUPPLY - owners.length;
            if (op.amount > remaining) {
              await expect(call).to.be.revertedWithCustomError(nft, "MaxSupplyExceeded").withArgs(op.amount, remaining);
            } else {
              await (await call).wait();
              for (let i = 0; i < op.amount; i++) owners.push(addresses[op.who]);
            }
          } else if (owners.length > 0) {
            const id = (op.pick % owners.length) + 1;
            const from = signers[addresses.indexOf(owners[id - 1])];
            const sender = nft.connect(from);
            const tx = op.safe
              ? await sender["safeTransferFrom(address,address,uint256)"](from.address, addresses[op.to], id)
              : await sender.transferFrom(from.address, addresses[op.to], id);
            await tx.wait();
            owners[id - 1] = addresses[op.to];
          }
        }

        const supply = await nft.totalSupply();
        expect(supply).to.equal(BigInt(owners.length));

        let balanceSum = 0n;
        const seen: bigint[] = [];
        for (const account of addresses) {
          const balance = await nft.balanceOf(account);
          const wallet = [...(await nft.walletOfOwner(account))];
          balanceSum += balance;
          expect(BigInt(wallet.length)).to.equal(balance);
          for (let i = 1; i < wallet.length; i++) expect(wallet[i] > wallet[i - 1]).to.equal(true);
          for (const id of wallet) expect(owners[Number(id) - 1]).to.equal(account);
          seen.push(...wallet);
        }
        expect(balanceSum).to.equal(supply);

        // Disjoint and covering: every id 1..totalSupply appears exactly once across all wallets.
        seen.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        expect(seen).to.deep.equal(Array.from({ length: owners.length }, (_, i) => BigInt(i + 1)));

        for (let id = 1; id <= owners.length; id++) {
          expect(await nft.ownerOf(id)).to.equal(owners[id - 1]);
        }
      }),
      { numRuns: 25 },
    );
  });
});
