import path from "node:path";
import { ContractFactory, Interface, ZeroAddress } from "ethers";
import { artifactLoader, type Artifact } from "./artifact";

/** Name of the editions artifact `npm run build` writes beside the compiled module (scripts/build.ts). */
export const BUILT_IN_EDITIONS_ARTIFACT_FILE = "editions-artifact.json";
/** From source: Hardhat's compilation output of the reference ERC-1155 editions contract. */
export const HARDHAT_EDITIONS_ARTIFACT_PATH = path.resolve(
  __dirname,
  "../../artifacts/contracts/NFTEditions.sol/NFTEditions.json",
);

const artifact = artifactLoader(path.join(__dirname, BUILT_IN_EDITIONS_ARTIFACT_FILE), HARDHAT_EDITIONS_ARTIFACT_PATH);

/** The compiled reference editions contract (ABI and bytecode): built in (production) or Hardhat's artifact. */
export function editionsArtifact(): Artifact {
  return artifact.load();
}

let iface: Interface | undefined;

/** The editions contract's ABI as an ethers Interface (also decodes OpenZeppelin's ERC-1155 errors). */
export function editionsInterface(): Interface {
  iface ??= new Interface(editionsArtifact().abi);
  return iface;
}

/** What an editions contract is deployed with; each edition's price and caps come with createEdition. */
export interface EditionsParams {
  name: string;
  symbol: string;
  baseURI: string;
  /** ERC-2981: who receives royalties (unset = no royalty) and how much, in basis points. */
  royaltyReceiver?: string;
  royaltyBps?: bigint;
  /** The ERC-20 every edition's price is in (unset or the zero address = the native coin). */
  paymentToken?: string;
}

/** The unsigned transaction that deploys an editions contract with `params`. */
export async function editionsDeployTransaction(params: EditionsParams) {
  const { abi, bytecode } = editionsArtifact();
  const factory = new ContractFactory(abi, bytecode);
  return factory.getDeployTransaction(
    params.name,
    params.symbol,
    params.baseURI,
    params.royaltyReceiver ?? ZeroAddress,
    params.royaltyReceiver ? (params.royaltyBps ?? 0n) : 0n,
    params.paymentToken ?? ZeroAddress,
  );
}
