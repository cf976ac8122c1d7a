import { readFileSync } from "node:fs";
import path from "node:path";
import { ContractFactory, Interface, type InterfaceAbi } from "ethers";

interface Artifact {
  abi: InterfaceAbi;
  bytecode: string;
}

const ARTIFACT_PATH = path.resolve(__dirname, "../../artifacts/contracts/NFTCollection.sol/NFTCollection.json");

let artifact: Artifact | undefined;

/** The compiled reference collection (ABI and bytecode) from Hardhat's artifacts. */
export function collectionArtifact(): Artifact {
  if (!artifact) {
    try {
      artifact = JSON.parse(readFileSync(ARTIFACT_PATH, "utf8")) as Artifact;
    } catch {
      throw new Error(`Contract artifact missing at ${ARTIFACT_PATH}: run \`npx hardhat compile\``);
    }
  }
  return artifact;
}

let iface: Interface | undefined;

/** The collection's ABI as an ethers Interface (also decodes OpenZeppelin and ERC721A errors). */
export function collectionInterface(): Interface {
  iface ??= new Interface(collectionArtifact().abi);
  return iface;
}

export interface CollectionParams {
  name: string;
  symbol: string;
  baseURI: string;
  cost: bigint;
  maxSupply: bigint;
  maxMintAmountPerTx: bigint;
}

export const DEFAULT_COLLECTION: CollectionParams = {
  name: "Reference Collection",
  symbol: "REF",
  baseURI: "ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/",
  cost: 10_000_000_000_000_000n, // 0.01 ether
  maxSupply: 10_000n,
  maxMintAmountPerTx: 10n,
};

/** The unsigned transaction that deploys a collection with `params`. */
export async function deployTransaction(params: CollectionParams) {
  const { abi, bytecode } = collectionArtifact();
  const factory = new ContractFactory(abi, bytecode);
  return factory.getDeployTransaction(
    params.name,
    params.symbol,
    params.baseURI,
    params.cost,
    params.maxSupply,
    params.maxMintAmountPerTx,
  );
}
