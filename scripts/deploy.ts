/**
 * Deploys the reference collection to the selected network and records its address in
 * deployments/<network>.json. Constructor values come from the environment:
 *   NFT_NAME, NFT_SYMBOL, NFT_BASE_URI, NFT_COST (wei, or the payment token's smallest unit), NFT_MAX_SUPPLY,
 *   NFT_MAX_MINT_PER_TX, NFT_PAYMENT_TOKEN (an ERC-20's address; unset: the native coin)
 * Usage: npx hardhat run scripts/deploy.ts --network localhost
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { getAddress } from "ethers";
import hre from "hardhat";
import { DEFAULT_COLLECTION, deployTransaction, type CollectionParams } from "../server/chain/collection";

function paramsFromEnv(env: NodeJS.ProcessEnv): CollectionParams {
  const big = (name: string, fallback: bigint) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
    return BigInt(raw);
  };
  const token = (raw: string) => {
    try {
      return getAddress(raw);
    } catch {
      throw new Error(`NFT_PAYMENT_TOKEN must be an address (0x and 40 hex digits), got "${raw}"`);
    }
  };
  return {
    name: env.NFT_NAME || DEFAULT_COLLECTION.name,
    symbol: env.NFT_SYMBOL || DEFAULT_COLLECTION.symbol,
    baseURI: env.NFT_BASE_URI ?? DEFAULT_COLLECTION.baseURI,
    cost: big("NFT_COST", DEFAULT_COLLECTION.cost),
    maxSupply: big("NFT_MAX_SUPPLY", DEFAULT_COLLECTION.maxSupply),
    maxMintAmountPerTx: big("NFT_MAX_MINT_PER_TX", DEFAULT_COLLECTION.maxMintAmountPerTx),
    ...(env.NFT_PAYMENT_TOKEN ? { paymentToken: token(env.NFT_PAYMENT_TOKEN) } : {}),
  };
}

async function main(): Promise<void> {
  const params = paramsFromEnv(process.env);
  const [deployer] = await hre.ethers.getSigners();
  if (!deployer) throw new Error(`No account configured for network ${hre.network.name} (set DEPLOYER_PRIVATE_KEY)`);
  // The same deployment transaction as POST /nft/deploy and the embedded start.
  const sent = await deployer.sendTransaction(await deployTransaction(params));
  const receipt = await sent.wait();
  const address = receipt?.contractAddress;
  if (!address) throw new Error(`Deployment ${sent.hash} did not create a contract`);
  const { chainId } = await hre.ethers.provider.getNetwork();

  const file = path.join(__dirname, "..", "deployments", `${hre.network.name}.json`);
  mkdirSync(path.dirname(file), { recursive: true });
  const record = {
    network: hre.network.name,
    chainId: chainId.toString(),
    address,
    owner: deployer.address,
    transactionHash: sent.hash,
    params: Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])),
    deployedAt: new Date().toISOString(),
  };
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  console.log(
    `NFTCollection deployed to ${address} on ${hre.network.name} (chain ${chainId}); written to ${path.relative(process.cwd(), file)}`,
  );
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
