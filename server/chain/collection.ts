import path from "node:path";
import { ContractFactory, Interface, ZeroAddress } from "ethers";
import { artifactLoader, type Artifact } from "./artifact";

/** Name of the artifact `npm run build` writes beside the compiled module (scripts/build.ts). */
export const BUILT_IN_ARTIFACT_FILE = "collection-artifact.json";
/** In dist/: the collection built into the production output, which has no `artifacts/`. */
const BUILT_IN_ARTIFACT_PATH = path.join(__dirname, BUILT_IN_ARTIFACT_FILE);
/**
 * From source: Hardhat's compilation output. NFTDropCollection is NFTCollection (the same functions,
 * events and errors) with a constructor that also takes the drop settings (royalty, voucher signer,
 * payment token).
 */
export const HARDHAT_ARTIFACT_PATH = path.resolve(
  __dirname,
  "../../artifacts/contracts/NFTDropCollection.sol/NFTDropCollection.json",
);

const artifact = artifactLoader(BUILT_IN_ARTIFACT_PATH, HARDHAT_ARTIFACT_PATH);

/** Whether the collection's ABI and bytecode are there to load (built in, or compiled by Hardhat). */
export function collectionArtifactAvailable(): boolean {
  return artifact.available();
}

/** The compiled reference collection (ABI and bytecode): built in (production) or Hardhat's artifact. */
export function collectionArtifact(): Artifact {
  return artifact.load();
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
  /** ERC-2981: who receives royalties (unset = no royalty) and how much, in basis points. */
  royaltyReceiver?: string;
  royaltyBps?: bigint;
  /** The address whose EIP-712 signature makes a mint voucher valid (unset = none). */
  voucherSigner?: string;
  /** The ERC-20 prices are in (unset or the zero address = the native coin). */
  paymentToken?: string;
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
    params.royaltyReceiver ?? ZeroAddress,
    params.royaltyReceiver ? (params.royaltyBps ?? 0n) : 0n,
    params.voucherSigner ?? ZeroAddress,
    params.paymentToken ?? ZeroAddress,
  );
}
