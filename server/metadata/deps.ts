import type { MetadataService } from "./metadata-service";
import type { TokenUriCache } from "./token-uri-cache";

/** What the metadata routes and the tokenURI read need. */
export interface MetadataDeps {
  service: MetadataService;
  tokenUris: TokenUriCache;
  /** PUBLIC_URL, or http://HOST:PORT once the service listens. */
  publicUrl(): string;
}
