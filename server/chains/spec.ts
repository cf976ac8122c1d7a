import type { Config } from "../config/config";

/** What the configuration says of one chain (CHAINS, or RPC_URL / the embedded chain as the one-chain form). */
export interface ChainSpec {
  /** The chain id CHAINS names; unset for RPC_URL and the embedded chain, whose id the node tells. */
  id?: bigint;
  /** Lowercase letters, digits and `-`; unset = `chain-<id>` (`local` for the embedded chain). */
  name?: string;
  /** The chain's JSON-RPC URLs, in the order they are tried; empty for the embedded chain. */
  rpcUrls: string[];
  confirmations: number;
  finalityBlocks: number;
  txResendBlocks: number;
  maxFeePerGas?: bigint;
}

/** The name of the embedded chain (npm start with neither CHAINS nor RPC_URL). */
export const EMBEDDED_CHAIN_NAME = "local";

/** The chains the configuration names: CHAINS, else RPC_URL's one chain, else the embedded chain. */
export function chainSpecsOf(config: Config): ChainSpec[] {
  if (config.chains && config.chains.length > 0) return config.chains;
  return [
    {
      rpcUrls: config.rpcUrls ?? [],
      name: config.rpcUrls?.length ? undefined : EMBEDDED_CHAIN_NAME,
      confirmations: config.confirmations,
      finalityBlocks: config.finalityBlocks,
      txResendBlocks: config.txResendBlocks,
      maxFeePerGas: config.maxFeePerGas,
    },
  ];
}

/** A chain's name once its id is known. */
export function chainNameOf(spec: ChainSpec, chainId: bigint): string {
  return spec.name ?? `chain-${chainId}`;
}
