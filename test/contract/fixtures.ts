import { ethers } from "hardhat";
import type { NFTCollection } from "../../typechain-types";

export const NAME = "Test Collection";
export const SYMBOL = "TEST";
export const BASE_URI = "ipfs://QmBase/";
export const COST = ethers.parseEther("0.01");
export const MAX_SUPPLY = 10_000n;
export const MAX_PER_TX = 10n;
export const UINT128_MAX = 2n ** 128n - 1n;

export interface CollectionParams {
  baseURI?: string;
  cost?: bigint;
  maxSupply?: bigint;
  maxPerTx?: bigint;
}

/** Deploys an NFTCollection from account #0 with the given (or default) parameters. */
export async function deployCollection(params: CollectionParams = {}): Promise<NFTCollection> {
  const factory = await ethers.getContractFactory("NFTCollection");
  const nft = await factory.deploy(
    NAME,
    SYMBOL,
    params.baseURI ?? BASE_URI,
    params.cost ?? COST,
    params.maxSupply ?? MAX_SUPPLY,
    params.maxPerTx ?? MAX_PER_TX,
  );
  await nft.waitForDeployment();
  return nft;
}

/** The default collection plus named signers: `owner` deployed it, the others are plain users. */
export async function collectionFixture() {
  const [owner, alice, bob, carol, ...others] = await ethers.getSigners();
  const nft = await deployCollection();
  return { nft, owner, alice, bob, carol, others };
}

/** A collection with only 5 tokens of supply and up to 3 per transaction, for supply edges. */
export async function smallCollectionFixture() {
  const [owner, alice, bob] = await ethers.getSigners();
  const nft = await deployCollection({ maxSupply: 5n, maxPerTx: 3n });
  return { nft, owner, alice, bob };
}
