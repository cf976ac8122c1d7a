/**
 * Gas benchmark of the drop functions, each against the call it replaces, on one collection in one run.
 *
 *   npx hardhat run bench/drops.ts      (npm run bench:drops)
 *
 * Every row starts from the same snapshot of a warm collection (another account has minted), and each
 * call mints to or lists accounts that hold nothing and are listed nowhere. Exits non-zero when a
 * target is missed.
 */
import { ethers, network } from "hardhat";
import { takeSnapshot } from "@nomicfoundation/hardhat-network-helpers";
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import type { ContractTransactionResponse } from "ethers";
import { checked, sized } from "./smoke";

const COST = ethers.parseEther("0.01");
const RECIPIENTS = sized(100, 5);
const ALLOWLIST_ENTRIES = sized(100_000, 1_000);
const TARGETS = {
  airdropPerRecipient: 0.65, // vs mintForFree(1) to each
  addToWhitelistPerAddress: 0.6, // vs addUserAddressToWhitelist each
  allowlistMint: 1.25, // vs mint(1), with a proof of a 100,000-entry tree
  mintWithVoucher: 1.5, // vs mint(1)
};

async function gasOf(tx: Promise<ContractTransactionResponse>): Promise<bigint> {
  const receipt = await (await tx).wait();
  if (!receipt) throw new Error("no receipt");
  return receipt.gasUsed;
}

async function main(): Promise<void> {
  if (network.name !== "hardhat") throw new Error("run this on the in-process hardhat network");
  const [owner, warmer, signer, buyer] = await ethers.getSigners();
  const nft = await ethers.deployContract(
    "NFTCollection",
    ["Bench", "BNCH", "ipfs://bench/", COST, 100_000n, 10n],
    owner,
  );
  await nft.waitForDeployment();
  await (await nft.connect(warmer).mint(1n, { value: COST })).wait();
  const fresh = (n: number) =>
    Array.from({ length: n }, () => ethers.getAddress(ethers.hexlify(ethers.randomBytes(20))));

  // The allowlist: the buyer among 100,000 entries (built by the same library the service uses).
  const entries: [string, string, string][] = fresh(ALLOWLIST_ENTRIES - 1).map((a) => [a, "1", COST.toString()]);
  entries.splice(ALLOWLIST_ENTRIES / 2, 0, [buyer.address, "1", COST.toString()]);
  const tree = StandardMerkleTree.of(entries, ["address", "uint256", "uint256"]);
  const proof = tree.getProof(ALLOWLIST_ENTRIES / 2);
  const setAllowlistGas = await gasOf(nft.connect(owner).setAllowlist(tree.root));
  await (await nft.connect(owner).setVoucherSigner(signer.address)).wait();
  const { chainId } = await ethers.provider.getNetwork();
  const domain = { name: "Bench", version: "1", chainId, verifyingContract: await nft.getAddress() };
  const voucher = { to: buyer.address, amount: 1n, price: COST, validUntil: 2n ** 40n, id: ethers.id("bench") };
  const types = {
    Voucher: [
      { name: "to", type: "address" },
      { name: "amount", type: "uint256" },
      { name: "price", type: "uint256" },
      { name: "validUntil", type: "uint64" },
      { name: "id", type: "bytes32" },
    ],
  };
  const signature = await signer.signTypedData(domain, types, voucher);

  const snapshot = await takeSnapshot();
  const measure = async (run: () => Promise<bigint>) => {
    const gas = await run();
    await snapshot.restore();
    return gas;
  };
  const sum = async (calls: (() => Promise<ContractTransactionResponse>)[]) => {
    let total = 0n;
    for (const call of calls) total += await gasOf(call());
    return total;
  };

  const recipients = fresh(RECIPIENTS);
  const gas = {
    mint: await measure(() => gasOf(nft.connect(buyer).mint(1n, { value: COST }))),
    mintForFreeEach: await measure(() => sum(recipients.map((to) => () => nft.connect(owner).mintForFree(1n, to)))),
    airdrop: await measure(() =>
      gasOf(
        nft.connect(owner).airdrop(
          recipients,
          recipients.map(() => 1n),
        ),
      ),
    ),
    whitelistEach: await measure(() =>
      sum(recipients.map((account) => () => nft.connect(owner).addUserAddressToWhitelist(account))),
    ),
    addToWhitelist: await measure(() => gasOf(nft.connect(owner).addToWhitelist(recipients))),
    allowlistMint: await measure(() => gasOf(nft.connect(buyer).allowlistMint(1n, 1n, COST, proof, { value: COST }))),
    mintWithVoucher: await measure(() =>
      gasOf(nft.connect(buyer).mintWithVoucher(voucher, signature, { value: COST })),
    ),
  };

  const n = BigInt(RECIPIENTS);
  const rows = [
    {
      check: `airdrop, per recipient (${RECIPIENTS} fresh addresses, 1 token each)`,
      gas: gas.airdrop / n,
      baseline: `mintForFree(1) each: ${gas.mintForFreeEach / n}`,
      ratio: Number(gas.airdrop) / Number(gas.mintForFreeEach),
      target: TARGETS.airdropPerRecipient,
    },
    {
      check: `addToWhitelist, per address (${RECIPIENTS})`,
      gas: gas.addToWhitelist / n,
      baseline: `addUserAddressToWhitelist each: ${gas.whitelistEach / n}`,
      ratio: Number(gas.addToWhitelist) / Number(gas.whitelistEach),
      target: TARGETS.addToWhitelistPerAddress,
    },
    {
      check: `allowlistMint(1), proof of ${proof.length} nodes (${ALLOWLIST_ENTRIES} entries)`,
      gas: gas.allowlistMint,
      baseline: `mint(1): ${gas.mint}`,
      ratio: Number(gas.allowlistMint) / Number(gas.mint),
      target: TARGETS.allowlistMint,
    },
    {
      check: "mintWithVoucher(1)",
      gas: gas.mintWithVoucher,
      baseline: `mint(1): ${gas.mint}`,
      ratio: Number(gas.mintWithVoucher) / Number(gas.mint),
      target: TARGETS.mintWithVoucher,
    },
  ];
  console.log(
    `gasUsed from receipts; setAllowlist of ${ALLOWLIST_ENTRIES} entries: one transaction, ${setAllowlistGas} gas`,
  );
  console.table(rows.map((r) => ({ ...r, gas: Number(r.gas), ratio: r.ratio.toFixed(3), target: `<= ${r.target}` })));
  let failed = false;
  for (const row of rows) {
    const ok = row.ratio <= row.target;
    failed ||= !ok;
    console.log(
      `${ok ? "PASS" : "FAIL"}: ${row.check} = ${row.ratio.toFixed(3)}x ${row.baseline} (target <= ${row.target}x)`,
    );
  }
  if (failed) process.exitCode = checked(1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
