/** Hosted token metadata (API.md, "Metadata"): upload, serving, commit and reveal, IPFS packaging, tokenURI cache. */
import type { BlockFeed } from "../chain/block-feed";
import type { ChainClient } from "../chain/chain-client";
import type { CollectionIndex } from "../collections";
import type { SqlDriver } from "../db";
import type { CarCache } from "./car-cache";
import type { MetadataDeps } from "./deps";
import type { PublicRateLimit } from "./rate-limit";
import { MetadataService } from "./metadata-service";
import { MetadataStore } from "./store";
import { TokenUriCache } from "./token-uri-cache";

export type { MetadataDeps };
export { createMetadataRouter, registerMetadataOpenApi } from "./routes";
export { MetadataService } from "./metadata-service";
export { TokenUriCache } from "./token-uri-cache";
export { CarCache } from "./car-cache";
export { PublicRateLimit, publicRateLimit, clientAddress } from "./rate-limit";

export interface OpenMetadataOptions {
  db: SqlDriver;
  chain: ChainClient;
  /** Which tokens exist, and the ERC-4906 events that drop what is kept. */
  index?: CollectionIndex;
  /** The head without a call, for tokenURI answers kept one block. */
  blocks?: BlockFeed;
  publicUrl(): string;
  /** REVEAL_DELAY_BLOCKS. */
  revealDelayBlocks: number;
  /** Shared by every chain's metadata: the public documents' limit, the CARs built. */
  limit?: PublicRateLimit;
  cars: CarCache;
}

/**
 * The metadata service and the tokenURI cache, each dropping what it keeps of a collection when the
 * index reads an ERC-4906 event of it.
 */
export function openMetadata(options: OpenMetadataOptions): MetadataDeps {
  const { chain, index, blocks } = options;
  const service = new MetadataService(new MetadataStore(options.db), chain, index);
  const followed = new Map<string, number>();
  const tokenUris = new TokenUriCache(chain, {
    head: () => blocks?.head,
    async follows(address) {
      if (!index) return false;
      let id = followed.get(address);
      if (id === undefined) {
        const record = await index.find(address);
        if (!record) return false;
        followed.set(address, (id = record.id));
      }
      return index.indexer.follows(id);
    },
  });
  index?.indexer.onMetadataUpdates((updates) => {
    for (const address of new Set(updates.map((u) => u.address))) {
      tokenUris.drop(address);
      service.drop(address);
    }
  });
  return {
    service,
    tokenUris,
    publicUrl: options.publicUrl,
    revealDelayBlocks: options.revealDelayBlocks,
    limit: options.limit,
    cars: options.cars,
  };
}
