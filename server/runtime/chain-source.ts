import type { JsonRpcProvider } from "ethers";
import type { ChainClient } from "../chain/chain-client";
import type { HeadSource } from "../chain/head-subscription";
import type { ChainGate } from "../chain/provider";
import type { RpcUrlState } from "../chain/rpc-failover";
import type { RpcObserver } from "../metrics/metrics";

/** A chain reached: its provider and id (and each URL's state behind the failover transport). */
export interface ConnectedChain {
  provider: JsonRpcProvider;
  chainId: bigint;
  /** Each RPC URL's state (the failover transport's); unset for the embedded chain. */
  rpcUrls?: () => RpcUrlState[];
  /** What announces the chain's new heads (a WebSocket subscription, the embedded chain); unset = polling alone. */
  heads?: HeadSource;
  /** How the chain joins when its URLs did not answer at start; unset for the embedded chain. */
  gate?: ChainGate;
}

/** What a chain source's `prepare` may use of the started service (server/app/main's RunningService has it). */
export interface PreparedService {
  /** The first configured chain's client. */
  chain: ChainClient;
  /** The first chain's collections index, where a deployed collection is registered. */
  collections: { register(address: string, by: "deploy", deployedBlock?: number): Promise<unknown> };
}

/** A chain the entry brought along (the embedded Hardhat network), instead of RPC_URL. */
export interface ChainSource {
  /** Where outside tools reach it, for the banner. */
  rpcUrl: string;
  /** Shown beside the RPC URL. */
  note: string;
  /** How to reach the chain, reporting each JSON-RPC call to `observer`. */
  connect: (observer: RpcObserver) => Promise<ConnectedChain>;
  /** Runs once the service listens (deploys the reference collection); its answer goes in the banner. */
  prepare?(service: PreparedService): Promise<{ contractAddress?: string; ownerKey?: string; testToken?: string }>;
  /** How to fund an address on this chain, for the 402 INSUFFICIENT_FUNDS message. */
  fundingHint?: (address: string, wei: bigint) => string;
  /** Runs after the service has closed. */
  close(): Promise<void>;
}
