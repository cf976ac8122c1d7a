import type { CarCache } from "./car-cache";
import type { MetadataService } from "./metadata-service";
import type { PublicRateLimit } from "./rate-limit";
import type { TokenUriCache } from "./token-uri-cache";

/** What the metadata routes and the tokenURI read need. */
export interface MetadataDeps {
  service: MetadataService;
  tokenUris: TokenUriCache;
  /** PUBLIC_URL, or http://HOST:PORT once the service listens. */
  publicUrl(): string;
  /** REVEAL_DELAY_BLOCKS: blocks from the commit to the reveal block. */
  revealDelayBlocks: number;
  /** The public documents' limit per client address (shared by every chain); unset = none. */
  limit?: PublicRateLimit;
  /** Built CARs by root CID, one built at a time (shared by every chain). */
  cars: CarCache;
}
