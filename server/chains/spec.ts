import type { ChainSpec } from "../config/chains-config";
import type { Config } from "../config/config";

export type { ChainSpec };

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
