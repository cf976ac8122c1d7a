import { expect } from "chai";
import type { JsonRpcProvider, Wallet } from "ethers";
import { ChainNode, deployDirectly, directProvider, fundedWallet } from "../api/harness";

export interface TwoChains {
  alpha: ChainNode;
  beta: ChainNode;
  providers: Record<"alpha" | "beta", JsonRpcProvider>;
  /** Funded on both chains. */
  owner: Wallet;
  /** The owner's first contract on each chain: the same address on both. */
  collection: string;
}

/**
 * Two `hardhat node`s with the ids given, one wallet funded on both, and the reference collection
 * deployed as that wallet's first contract on each: the same address on two chains.
 */
export async function startTwoChains(alphaId: number, betaId: number): Promise<TwoChains> {
  const [alpha, beta] = await Promise.all([ChainNode.start(undefined, alphaId), ChainNode.start(undefined, betaId)]);
  const providers = { alpha: directProvider(alpha.rpcUrl, alphaId), beta: directProvider(beta.rpcUrl, betaId) };
  const owner = await fundedWallet(providers.alpha);
  await providers.beta.send("hardhat_setBalance", [owner.address, `0x${(100n * 10n ** 18n).toString(16)}`]);
  const [onAlpha, onBeta] = await Promise.all([
    deployDirectly(owner.connect(providers.alpha)),
    deployDirectly(owner.connect(providers.beta)),
  ]);
  expect(onAlpha).to.equal(onBeta);
  return { alpha, beta, providers, owner, collection: onAlpha };
}
