import { ethers } from "hardhat";
import type { BaseContract, Signer } from "ethers";
import { deployCollection, editionsFixture } from "./fixtures";

/** One TUSD is 10^6 units (6 decimals). */
export const USD = 1_000_000n;
/** The token price of one token (one edition token) in the tests: 12.5 TUSD. */
export const TOKEN_COST = 12_500_000n;

/** An ERC-20 with an open mint, as the test tokens have. */
export interface MintableToken extends BaseContract {
  mint(to: string, amount: bigint): Promise<unknown>;
}

/** Deploys a test token (TestUSD, PlainERC20 or FalseReturningERC20) from account #0. */
export async function deployToken(name: "TestUSD" | "PlainERC20" | "FalseReturningERC20") {
  const token = await ethers.deployContract(name);
  await token.waitForDeployment();
  return token;
}

/** Signs `owner`'s EIP-2612 permit of `value` to `spender` at the token's current nonce of `owner`. */
export async function signPermit(
  token: Awaited<ReturnType<typeof tusdOf>>,
  owner: Signer,
  spender: string,
  value: bigint,
  deadline: bigint,
  nonce?: bigint,
): Promise<{ v: number; r: string; s: string }> {
  const ownerAddress = await owner.getAddress();
  const { chainId } = await ethers.provider.getNetwork();
  const domain = { name: await token.name(), version: "1", chainId, verifyingContract: await token.getAddress() };
  const types = {
    Permit: [
      { name: "owner", type: "address" },
      { name: "spender", type: "address" },
      { name: "value", type: "uint256" },
      { name: "nonce", type: "uint256" },
      { name: "deadline", type: "uint256" },
    ],
  };
  const message = {
    owner: ownerAddress,
    spender,
    value,
    nonce: nonce ?? (await token.nonces(ownerAddress)),
    deadline,
  };
  const signature = ethers.Signature.from(await owner.signTypedData(domain, types, message));
  return { v: signature.v, r: signature.r, s: signature.s };
}

/** TestUSD, typed. */
export async function tusdOf(address: string) {
  return ethers.getContractAt("TestUSD", address);
}

/**
 * The default collection priced at TOKEN_COST TUSD, plus a `buyer` wallet with 1,000 TUSD and exactly 0 ETH
 * (it only signs), and the named signers of `collectionFixture`.
 */
export async function tokenCollectionFixture() {
  const [owner, alice, bob, carol, ...others] = await ethers.getSigners();
  const nft = await deployCollection({ cost: TOKEN_COST });
  const tusd = await tusdOf(await (await deployToken("TestUSD")).getAddress());
  await (await nft.connect(owner).setPaymentToken(await tusd.getAddress())).wait();
  const buyer = ethers.Wallet.createRandom().connect(ethers.provider);
  for (const account of [alice.address, bob.address, buyer.address])
    await (await tusd.mint(account, 1_000n * USD)).wait();
  return { nft, tusd, owner, alice, bob, carol, buyer, others };
}

/** `editionsFixture`'s two editions (CAPPED, OPEN) priced in TUSD: TOKEN_COST and 2 × TOKEN_COST, as tokenCollectionFixture. */
export async function tokenEditionsFixture() {
  const base = await editionsFixture();
  const { editions, owner, alice, bob } = base;
  const tusd = await tusdOf(await (await deployToken("TestUSD")).getAddress());
  await (await editions.connect(owner).setPaymentToken(await tusd.getAddress())).wait();
  await (await editions.connect(owner).setCost(1n, TOKEN_COST)).wait();
  await (await editions.connect(owner).setCost(2n, TOKEN_COST * 2n)).wait();
  const buyer = ethers.Wallet.createRandom().connect(ethers.provider);
  for (const account of [alice.address, bob.address, buyer.address])
    await (await tusd.mint(account, 1_000n * USD)).wait();
  return { ...base, tusd, buyer };
}
