/**
 * Serving hosted metadata (API.md, "Metadata"): every document a collection serves is kept in
 * memory as the bytes to send, with what the chain says of its reveal (read once, then again only
 * when the index reads an ERC-4906 event of the collection or a reveal through the service
 * confirms), and which tokens exist (from the index). A request never reaches the chain, and a
 * collection the store holds nothing of is never read from it: a request for any address costs the
 * store a query, not the RPC provider a call. At most MAX_KEPT collections are kept (least recently
 * served dropped first); one with no metadata is not kept.
 * An ERC-1155 edition contract has no reveal: each edition's document is served as uploaded once
 * the edition has a token, which is asked of the chain (its totalSupply(id)) once per edition minted,
 * and for one not minted yet at most once a RECHECK_MS or index move.
 * Another instance sharing the store may upload, commit, reveal or index the collection's events:
 * at most once a RECHECK_MS a request of a kept collection compares the store's version of it (one
 * query, not awaited by the request) with the one it was loaded with, and a different one drops it.
 */
import { LRUCache } from "lru-cache";
import type { ChainClient, Standard } from "../chain/chain-client";
import type { CollectionIndex } from "../collections";
import { ZERO_ADDRESS } from "../collections";
import { ApiError } from "../http/errors";
import { canonical } from "./documents";
import { metadataChainId } from "./chain-id";
import { editionMinted } from "./editions";
import { revealedDocumentId } from "./provenance";
import type { MetadataRecord, MetadataStore } from "./store";

/** Served before the reveal when the collection uploaded no placeholder. */
export const DEFAULT_PLACEHOLDER = canonical({ name: "Unrevealed", description: "This token is not revealed yet." });

/** What the chain says of a collection's provenance and reveal. */
export interface RevealState {
  provenance: string | null;
  count: bigint;
  revealed: boolean;
  startingIndex: bigint | null;
  /** The block whose hash fixes the starting index (set by the commit); null before it. */
  revealBlock: bigint | null;
}

/** How long a collection's kept copy is served before the store is asked whether it changed. */
const RECHECK_MS = 1_000;

/** The most collections whose documents are kept in memory. */
const MAX_KEPT = 1_000;

const NO_REVEAL: RevealState = {
  provenance: null,
  count: 0n,
  revealed: false,
  startingIndex: null,
  revealBlock: null,
};

interface Entry {
  record: MetadataRecord | null;
  /** An ERC-1155 edition contract serves each edition's document as uploaded (no reveal); null with no record. */
  standard: Standard | null;
  placeholder: Buffer;
  /** Uploaded documents by token id (loaded once revealed; the placeholder alone is served before). */
  documents: Map<bigint, Buffer>;
  reveal: RevealState;
  /** The store's version of the collection, read before the rest (MetadataStore.version). */
  version: string;
}

export class MetadataService {
  private readonly entries = new LRUCache<string, Promise<Entry>>({
    max: MAX_KEPT,
    // What goes with a kept collection goes with it.
    dispose: (_entry, key, reason) => {
      if (reason === "set") return;
      this.minted.delete(key);
      this.unminted.delete(key);
      this.checkedAt.delete(key);
    },
  });
  private readonly minted = new Map<string, Set<bigint>>();
  private readonly unminted = new Map<string, Set<bigint>>();
  private readonly dropListeners = new Set<(address: string) => void>();
  /** When each kept collection was last compared with the store. */
  private readonly checkedAt = new Map<string, number>();

  constructor(
    readonly store: MetadataStore,
    readonly chain: ChainClient,
    private readonly index?: CollectionIndex,
  ) {
    // A token not there yet may be there once the index moves on.
    index?.indexer.onProgress(() => this.unminted.clear());
  }

  get chainId(): string {
    return metadataChainId(this.chain);
  }

  /** Forgets what is kept of `address` (its documents changed, or an ERC-4906 event was read). */
  drop(address: string): void {
    const key = address.toLowerCase();
    this.entries.delete(key);
    for (const listener of this.dropListeners) listener(key);
  }

  onDrop(listener: (address: string) => void): void {
    this.dropListeners.add(listener);
  }

  /** The bytes served for token `tokenId` of `address` on `chainId` (an edition's id on an edition contract). */
  async serve(chainId: string, address: string, tokenId: bigint): Promise<Buffer> {
    if (chainId !== this.chainId) throw new ApiError("NOT_FOUND", `No metadata is hosted on chain ${chainId}`);
    const entry = await this.entry(address);
    if (!entry.record) throw new ApiError("NOT_FOUND", `No metadata is hosted for ${address}`);
    if (entry.standard === "erc1155") {
      if (!(await this.exists(address, tokenId, true)))
        throw new ApiError("TOKEN_NOT_FOUND", `Edition ${tokenId} of ${address} has no token minted`);
      const document = entry.documents.get(tokenId);
      if (!document) throw new ApiError("NOT_FOUND", `No document is uploaded for edition ${tokenId} of ${address}`);
      return document;
    }
    if (!(await this.exists(address, tokenId)))
      throw new ApiError("TOKEN_NOT_FOUND", `Token ${tokenId} of ${address} is not minted`);
    if (!entry.reveal.revealed || entry.reveal.startingIndex === null) return entry.placeholder;
    const document = entry.documents.get(revealedDocumentId(tokenId, entry.reveal.startingIndex, entry.reveal.count));
    if (!document) throw new ApiError("NOT_FOUND", `No document is uploaded for token ${tokenId} of ${address}`);
    return document;
  }

  /**
   * The collection's state as kept (loaded once; the chain read with it). One with no metadata in
   * the store is read from the chain now (a keyed route: what the chain says of it still shows).
   */
  async state(
    address: string,
  ): Promise<{ record: MetadataRecord | null; reveal: RevealState; standard: Standard | null }> {
    const { record, reveal, standard } = await this.entry(address);
    if (!record) return { record, reveal: await this.readReveal(address), standard };
    return { record, reveal, standard };
  }

  /** What the chain says of the reveal, read now. Not the reference contract: no provenance, never revealed. */
  async readReveal(address: string): Promise<RevealState> {
    const { chain } = this;
    try {
      const [provenance, count, revealed, startingIndex, revealBlock] = await chain.read(address, () =>
        Promise.all([
          chain.view(address, "provenance", []),
          chain.view(address, "provenanceCount", []),
          chain.view(address, "revealed", []),
          chain.view(address, "startingIndex", []),
          chain.view(address, "revealBlock", []),
        ]),
      );
      return {
        provenance: count > 0n ? provenance : null,
        count,
        revealed,
        startingIndex: revealed ? startingIndex : null,
        revealBlock: count > 0n ? revealBlock : null,
      };
    } catch (err) {
      if (err instanceof ApiError && err.code === "CHAIN_UNAVAILABLE") throw err;
      return NO_REVEAL;
    }
  }

  private entry(address: string): Promise<Entry> {
    const key = address.toLowerCase();
    let entry = this.entries.get(key);
    if (entry) this.recheck(key, entry);
    else {
      this.checkedAt.set(key, Date.now());
      entry = this.load(key);
      this.entries.set(key, entry);
      // A failed load (the chain or the store down) is not kept: the next request tries again. Nor is
      // a collection with no metadata: an address anyone may name would otherwise take a place.
      const loaded = entry;
      loaded.then(
        (kept) => {
          if (!kept.record && this.entries.peek(key) === loaded) this.entries.delete(key);
        },
        () => {
          if (this.entries.peek(key) === loaded) this.entries.delete(key);
        },
      );
    }
    return entry;
  }

  /** Drops `entry` if another instance changed the collection in the store (at most once a RECHECK_MS). */
  private recheck(key: string, entry: Promise<Entry>): void {
    const now = Date.now();
    if (now - (this.checkedAt.get(key) ?? 0) < RECHECK_MS) return;
    this.checkedAt.set(key, now);
    // Tokens minted since: the index that reads them may be another instance's.
    this.unminted.delete(key);
    entry
      .then(async (kept) => {
        const version = await this.store.version(this.chainId, key);
        if (version !== kept.version && this.entries.peek(key) === entry) this.drop(key);
      })
      .catch(() => {}); // the store down: asked again after RECHECK_MS
  }

  private async load(address: string): Promise<Entry> {
    // Read first: a change after it, even during the reads below, differs from it at the next recheck.
    const version = await this.store.version(this.chainId, address);
    const record = await this.store.find(this.chainId, address);
    // The chain only for a collection the service hosts (its standard is read once per process).
    const standard = record ? await this.chain.standardOf(address) : null;
    const editions = standard === "erc1155";
    const reveal = record && !editions ? await this.readReveal(address) : NO_REVEAL;
    const documents = new Map<bigint, Buffer>();
    // An edition contract's documents are served as uploaded: loaded at once, with no reveal to wait for.
    if (record && (editions || reveal.revealed)) {
      for (const [id, text] of await this.store.documents(this.chainId, address)) documents.set(id, Buffer.from(text));
      if (!editions && record.startingIndex === null && reveal.startingIndex !== null)
        await this.store.setRevealed(this.chainId, address, reveal.startingIndex);
    }
    const placeholder = Buffer.from(record?.placeholder ?? DEFAULT_PLACEHOLDER);
    return { record, standard, placeholder, documents, reveal, version };
  }

  /**
   * Whether token `tokenId` exists, from the index (a token seen once is kept; one not seen, until
   * the index moves or RECHECK_MS passes); an edition's (`edition`), from its supply on chain.
   */
  private async exists(address: string, tokenId: bigint, edition = false): Promise<boolean> {
    if (!this.index && !edition) return true;
    const key = address.toLowerCase();
    if (this.minted.get(key)?.has(tokenId)) return true;
    if (this.unminted.get(key)?.has(tokenId)) return false;
    const exists = edition ? await editionMinted(this.chain, address, tokenId) : await this.indexed(key, tokenId);
    const cache = exists ? this.minted : this.unminted;
    let set = cache.get(key);
    if (!set) cache.set(key, (set = new Set()));
    set.add(tokenId);
    return exists;
  }

  /** Whether the index holds token `tokenId` of `key` with an owner. */
  private async indexed(key: string, tokenId: bigint): Promise<boolean> {
    const { rows } = await this.index!.store.db.query<{ owner: string }>(
      `SELECT k.owner FROM index_tokens k JOIN indexed_collections c ON c.id = k.collection_id
       WHERE c.chain_id = $1 AND c.address = $2 AND k.token_id = $3`,
      [this.chainId, key, tokenId.toString()],
    );
    return rows.length > 0 && rows[0].owner !== ZERO_ADDRESS;
  }
}
