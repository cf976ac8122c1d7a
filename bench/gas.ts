/**
 * Gas benchmark: NFTCollection against an OpenZeppelin ERC721Enumerable collection and a plain ERC721A one.
 *
 *   npx hardhat run bench/gas.ts      (npm run bench:gas)
 *
 * Every row is measured from the same snapshot, so one measurement never warms storage for the next.
 * "warm" rows run on a contract where another account has already minted a token (the steady state of
 * a live collection); "first-ever" is the very first mint on a freshly deployed contract. In every row
 * the receiving account holds no tokens before the call. Exits non-zero when a target is missed.
 */
import { ethers, network } from "hardhat";
import { takeSnapshot } from "@nomicfoundation/hardhat-network-helpers";
import type { ContractRunner, ContractTransactionResponse } from "ethers";
import { gasChecks, verdict } from "./checks";

const COST = ethers.parseEther("0.01");
const MAX_SUPPLY = 10_000n;
const MAX_PER_TX = 10n;
// Targets: GAS_TARGETS in ./checks.

/** The part of the ABI all three contracts share. */
interface Collection {
  connect(runner: ContractRunner): Collection;
  mint(amount: bigint, overrides: { value: bigint }): Promise<ContractTransactionResponse>;
  mintForFree(amount: bigint, receiver: string): Promise<ContractTransactionResponse>;
  transferFrom(from: string, to: string, tokenId: bigint): Promise<ContractTransactionResponse>;
  totalSupply(): Promise<bigint>;
}

async function gasOf(tx: Promise<ContractTransactionResponse>): Promise<bigint> {
  const receipt = await (await tx).wait();
  if (!receipt) throw new Error("no receipt");
  return receipt.gasUsed;
}

async function main(): Promise<void> {
  if (network.name !== "hardhat") throw new Error("run this on the in-process hardhat network");
  const [owner, warmer, alice, carol] = await ethers.getSigners();

  const deploy = async (name: string, args: unknown[]) => {
    const contract = await ethers.deployContract(name, args, owner);
    await contract.waitForDeployment();
    return contract as unknown as Collection;
  };
  const contracts: Record<string, Collection> = {
    NFTCollection: await deploy("NFTCollection", ["Bench", "BNCH", "ipfs://bench/", COST, MAX_SUPPLY, MAX_PER_TX]),
    ERC721A: await deploy("ERC721AReference", [COST]),
    Enumerable: await deploy("EnumerableReference", [COST]),
  };
  const names = Object.keys(contracts);

  type Measure = (c: Collection) => Promise<bigint>;
  const firstEver: Record<string, Measure> = {
    "mint(1) first-ever": (c) => gasOf(c.connect(alice).mint(1n, { value: COST })),
  };
  const warm: Record<string, Measure> = {
    "mint(1) warm": (c) => gasOf(c.connect(alice).mint(1n, { value: COST })),
    "mint(5) warm": (c) => gasOf(c.connect(alice).mint(5n, { value: COST * 5n })),
    "mintForFree(5) warm": (c) => gasOf(c.connect(owner).mintForFree(5n, alice.address)),
    "transferFrom first of a 10-batch": async (c) => {
      const first = (await c.totalSupply()) + 1n;
      await (await c.connect(alice).mint(MAX_PER_TX, { value: COST * MAX_PER_TX })).wait();
      return gasOf(c.connect(alice).transferFrom(alice.address, carol.address, first));
    },
    "transferFrom last of a 10-batch": async (c) => {
      const last = (await c.totalSupply()) + MAX_PER_TX;
      await (await c.connect(alice).mint(MAX_PER_TX, { value: COST * MAX_PER_TX })).wait();
      return gasOf(c.connect(alice).transferFrom(alice.address, carol.address, last));
    },
  };

  const results: Record<string, Record<string, bigint>> = {};
  const run = async (rows: Record<string, Measure>) => {
    const snapshot = await takeSnapshot();
    for (const [row, measure] of Object.entries(rows)) {
      results[row] = {};
      for (const name of names) {
        results[row][name] = await measure(contracts[name]);
        await snapshot.restore();
      }
    }
  };

  await run(firstEver);
  for (const name of names) await (await contracts[name].connect(warmer).mint(1n, { value: COST })).wait();
  await run(warm);

  const ratio = (a: bigint, b: bigint) => Number(a) / Number(b);
  const table = Object.fromEntries(
    Object.entries(results).map(([row, gas]) => [
      row,
      {
        NFTCollection: Number(gas.NFTCollection),
        ERC721A: Number(gas.ERC721A),
        Enumerable: Number(gas.Enumerable),
        "ours/ERC721A": ratio(gas.NFTCollection, gas.ERC721A).toFixed(3),
        "ours/Enumerable": ratio(gas.NFTCollection, gas.Enumerable).toFixed(3),
      },
    ]),
  );
  console.log(`gasUsed from receipts (cost ${ethers.formatEther(COST)} ETH, maxMintAmountPerTx ${MAX_PER_TX})`);
  console.table(table);

  const mint5 = results["mint(5) warm"];
  const vsA = ratio(mint5.NFTCollection, mint5.ERC721A);
  const vsEnum = ratio(mint5.NFTCollection, mint5.Enumerable);
  process.exitCode = verdict(gasChecks({ vsErc721a: vsA, vsEnumerable: vsEnum }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
