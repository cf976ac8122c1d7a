/**
 * tokenURI answers kept in memory (API.md, "Metadata": reads that cost nothing). For a collection
 * that declares ERC-4906 and that this process indexes, an answer stays until the index reads a
 * MetadataUpdate or BatchMetadataUpdate of it (or a setBaseURI through the service answers);
 * otherwise it holds for the block it was read in only.
 */
import type { ChainClient } from "../chain/chain-client";
import { ApiError } from "../http/errors";

/** ERC-4906's interface id (ERC-165). */
export const ERC4906_INTERFACE_ID = "0x49064906";
/** Answers kept per collection at most: past it the collection's are dropped and kept anew. */
const MAX_PER_COLLECTION = 100_000;
/** How long whether this process indexes a collection is taken as known. */
const FOLLOWS_TTL_MS = 5_000;

export interface TokenUriCacheOptions {
  /** The newest block seen (the shared block feed), no call; undefined when unknown. */
  head(): number | undefined;
  /** Whether this process's index reads the collection's events now. */
  follows(address: string): Promise<boolean>;
}

interface Kept {
  generation: number;
  uris: Map<bigint, { uri: string; block?: number }>;
}

export class TokenUriCache {
  private readonly kept = new Map<string, Kept>();
  private readonly declares = new Map<string, Promise<boolean>>();
  private readonly followed = new Map<string, { follows: boolean; at: number }>();

  constructor(
    private readonly chain: ChainClient,
    private readonly options: TokenUriCacheOptions,
  ) {}

  /** tokenURI of `tokenId`: kept, or `read` from the chain and kept. */
  async tokenURI(address: string, tokenId: bigint, read: () => Promise<string>): Promise<string> {
    const key = address.toLowerCase();
    const kept = this.keptOf(key);
    const eventDriven = await this.eventDriven(key);
    const hit = kept.uris.get(tokenId);
    const head = this.options.head();
    if (hit && (eventDriven ? hit.block === undefined : head !== undefined && hit.block === head)) return hit.uri;
    const generation = kept.generation;
    const uri = await read();
    // Not kept when dropped meanwhile: the answer may predate the change that dropped it.
    if (kept.generation === generation && this.kept.get(key) === kept && (eventDriven || head !== undefined)) {
      if (kept.uris.size >= MAX_PER_COLLECTION) kept.uris.clear();
      kept.uris.set(tokenId, eventDriven ? { uri } : { uri, block: head });
    }
    return uri;
  }

  /** Drops every answer kept for `address`. */
  drop(address: string): void {
    const kept = this.kept.get(address.toLowerCase());
    if (!kept) return;
    kept.generation++;
    kept.uris.clear();
  }

  private keptOf(key: string): Kept {
    let kept = this.kept.get(key);
    if (!kept) this.kept.set(key, (kept = { generation: 0, uris: new Map() }));
    return kept;
  }

  /** Whether answers for `key` may be kept until an ERC-4906 event: it declares ERC-4906 and the index here reads it. */
  private async eventDriven(key: string): Promise<boolean> {
    if (!(await this.declares4906(key))) return false;
    const known = this.followed.get(key);
    const now = Date.now();
    if (known && now - known.at < FOLLOWS_TTL_MS) return known.follows;
    const follows = await this.options.follows(key).catch(() => false);
    this.followed.set(key, { follows, at: now });
    if (!follows) this.drop(key); // events may have gone unread: nothing kept survives
    return follows;
  }

  private declares4906(key: string): Promise<boolean> {
    let declares = this.declares.get(key);
    if (!declares) {
      declares = this.chain.view(key, "supportsInterface", [ERC4906_INTERFACE_ID]).catch((err: unknown) => {
        // A chain that does not answer is asked again next time; a contract that cannot say, never.
        if (err instanceof ApiError && err.code === "CHAIN_UNAVAILABLE") this.declares.delete(key);
        return false;
      });
      this.declares.set(key, declares);
    }
    return declares;
  }
}
