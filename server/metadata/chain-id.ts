import type { ChainClient } from "../chain/chain-client";

/**
 * The chain hosted metadata is kept and served for. The service serves one chain today: its id
 * comes from the one chain client, here alone, so a per-request chain replaces this one function.
 */
export function metadataChainId(chain: ChainClient): string {
  return chain.options.chainId.toString();
}
