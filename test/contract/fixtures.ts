import { ethers } from "hardhat";
import type { NFTCollection, NFTEditions } from "../../typechain-types";

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

export const EDITIONS_NAME = "Test Editions";
export const EDITIONS_SYMBOL = "TEDS";
/** Edition 1 of `editionsFixture`: capped at 5, up to 3 per transaction, at COST. */
export const CAPPED = { id: 1n, cost: COST, maxSupply: 5n, maxPerTx: 3n };
/** Edition 2 of `editionsFixture`: an open edition (maxSupply 0), up to MAX_PER_TX per transaction, at 2 × COST. */
export const OPEN = { id: 2n, cost: COST * 2n, maxSupply: 0n, maxPerTx: MAX_PER_TX };

/** Deploys an NFTEditions from account #0, with no edition and the given (or no) royalty and payment token. */
export async function deployEditions(
  royaltyReceiver: string = ethers.ZeroAddress,
  royaltyBps = 0n,
  paymentToken: string = ethers.ZeroAddress,
): Promise<NFTEditions> {
  const factory = await ethers.getContractFactory("NFTEditions");
  const editions = await factory.deploy(
    EDITIONS_NAME,
    EDITIONS_SYMBOL,
    BASE_URI,
    royaltyReceiver,
    royaltyBps,
    paymentToken,
  );
  await editions.waitForDeployment();
  return editions;
}

/** An NFTEditions with its two editions, CAPPED (id 1) and OPEN (id 2), plus named signers as for a collection. */
export async function editionsFixture() {
  const [owner, alice, bob, carol, ...others] = await ethers.getSigners();
  const editions = await deployEditions();
  for (const e of [CAPPED, OPEN]) await (await editions.createEdition(e.cost, e.maxSupply, e.maxPerTx)).wait();
  return { editions, owner, alice, bob, carol, others };
}
