import type Router from "@koa/router";
import { getAddress } from "ethers";
import { z } from "zod";
import type { AccessControl } from "../../access";
import type { ChainClient } from "../../chain/chain-client";
import type { KnownHead } from "../../chain/chain-liveness";
import { answerWithin, KeptReads } from "../../chain/kept-reads";
import { chainStatus } from "../../chains/known-head";
import type { SqlExecutor } from "../../db";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { address, ChainQuery, decimal, OPEN_SECURITY, paymentTokenView } from "../../http/fields";
import type { PaymentToken } from "../../chain/payment-token";
import { decodeOpaqueCursor, encodeOpaqueCursor } from "../../http/paging";

// Shared with drops, metadata and the operation list, which take them from http/ directly.
export { ChainQuery, OPEN_SECURITY };
export { decodeOpaqueCursor as decodeCursor, encodeOpaqueCursor as encodeCursor };
import type { CollectionIndex } from "../collection-index";
import type { EditionSummary } from "../edition-store";
import type { CollectionRecord, CollectionStandard } from "../store";

export interface CollectionRouteDeps {
  index: CollectionIndex;
  chain: ChainClient;
  access: AccessControl;
  /** The address of the wallet the service holds under `label`, or null; unset = no wallets held. */
  walletByLabel?: (label: string) => Promise<string | null>;
}

/** One /collections route: mounted on the router, documented in the OpenAPI document. */
export interface CollectionRoute {
  mount(router: Router, deps: CollectionRouteDeps): void;
  document(registry: OpenAPIRegistry): void;
}

/** Reads of the index: nft:read, open like the /nft reads, within the key's collections. */
export const READ_ACCESS = {
  scope: "nft:read",
  key: "open",
  params: { collection: "address" },
} as const;

export const CollectionPath = z.object({ address: address("address") });

/** `?chain=`: the chain of the collection (required when several chains are configured). */
/** `?minBlock=`: the block the answer must reflect at least (read-your-writes after a write's blockNumber). */
export const minBlock = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().openapi({
  description:
    "Wait (up to 5 s) until the index reflects this block, e.g. the blockNumber of a write just answered; then 503 INDEX_BEHIND with Retry-After",
  example: 12,
});

export const limit = (fallback: number, max: number) => z.coerce.number().int().min(1).max(max).default(fallback);

export const cursorParam = z
  .string()
  .max(200)
  .optional()
  .openapi({ description: "The `cursor` of the previous page, as it gave it (any other string is refused)" });

/** The chain a collection answer is about: a collection is (chain, address). */
export const chainId = decimal.openapi({ description: "The chain's id, a decimal string", example: "31337" });

export const blockNumber = z.number().int().openapi({ description: "The block the answer reflects", example: 12 });

/**
 * The indexed collection at `address` as of a snapshot that reflects at least `minBlock`: 404
 * COLLECTION_NOT_FOUND when the index does not follow it, 503 INDEX_BEHIND when it has not started
 * or does not reach `minBlock` within 5 s. `read` runs on that snapshot.
 */
export async function readIndexed<T extends object>(
  deps: CollectionRouteDeps,
  at: string,
  minBlock: number | undefined,
  read: (db: SqlExecutor, record: CollectionRecord & { indexedBlock: number }) => Promise<T>,
): Promise<{ chainId: string; chainStatus?: "down" } & T> {
  const found = await deps.index.find(at);
  if (!found) throw notFound(at);
  if (minBlock !== undefined) await deps.index.atBlock(found, minBlock);
  return deps.index.store.snapshot(async (db) => {
    const record = await deps.index.store.find(deps.index.chainId, at.toLowerCase(), db);
    if (!record) throw notFound(at);
    if (record.indexedBlock === null)
      throw new ApiError("INDEX_BEHIND", `The index of ${at} has not started yet`, undefined, { "Retry-After": "1" });
    const answer = await read(db, record as CollectionRecord & { indexedBlock: number });
    // Nothing here asks the chain; while it is known down, the answer says so.
    return {
      chainId: record.chainId,
      ...answer,
      ...(deps.chain.liveness.down ? { chainStatus: "down" as const } : {}),
    };
  });
}

export function notFound(at: string): ApiError {
  return new ApiError(
    "COLLECTION_NOT_FOUND",
    `The index does not follow ${at}: register it with POST /collections (an ERC-721 only)`,
  );
}

/** A lower-case address as clients see it (EIP-55). */
export const checksummed = (lower: string) => getAddress(lower);

/**
 * The collection at `address` and its standard (kept with it, else read once by ERC-165): asked
 * before a read's snapshot, so that no chain call runs inside it. 404 when the index does not follow it.
 */
export async function indexedStandard(
  deps: CollectionRouteDeps,
  at: string,
): Promise<{ record: CollectionRecord; standard: CollectionStandard }> {
  const record = await deps.index.find(at);
  if (!record) throw notFound(at);
  return { record, standard: await deps.index.standardOf(record) };
}

/** Max supplies read: fixed once deployed (an edition's once created), so read once per contract (and edition). */
const maxSupplies = new KeptReads<bigint | null>();

/**
 * The max supply of an ERC-721 (its `maxSupply()`), or of edition `tokenId` of an ERC-1155, from the
 * chain within `ms`: undefined when it has none (an ERC-721 without the view, an open edition), or
 * when the chain fails or is slower than that (the read goes on, and a later answer has it).
 */
export async function maxSupplyWithin(
  chain: ChainClient,
  at: string,
  ms: number,
  tokenId?: string,
): Promise<bigint | undefined> {
  const read = maxSupplies.get(chain, `${at.toLowerCase()}:${tokenId ?? ""}`, () => readMaxSupply(chain, at, tokenId));
  return (await answerWithin(read, ms)) ?? undefined;
}

async function readMaxSupply(chain: ChainClient, at: string, tokenId: string | undefined): Promise<bigint | null> {
  if (tokenId !== undefined) {
    const [, maxSupply] = await chain.read(at, () => chain.viewEdition(at, "edition", [BigInt(tokenId)]));
    return maxSupply === 0n ? null : maxSupply;
  }
  try {
    return await chain.read(at, () => chain.view(at, "maxSupply", []));
  } catch (err) {
    // An ERC-721 without the view has none (kept); any other failure is asked again.
    if (err instanceof ApiError && err.code === "UNSUPPORTED_CONTRACT") return null;
    throw err;
  }
}

export const standard = z
  .enum(["erc721", "erc1155"])
  .openapi({ description: "erc721: one token per id; erc1155: editions, each id held in amounts" });

export const EditionView = z
  .object({
    tokenId: decimal,
    supply: decimal.openapi({ description: "Held by an address other than zero" }),
    holders: z.number().int(),
  })
  .openapi("CollectionEdition");

export const CollectionView = z
  .object({
    chainId,
    address: z.string(),
    name: z.string().nullable(),
    symbol: z.string().nullable(),
    standard,
    paymentToken: paymentTokenView.optional(),
    totalSupply: decimal.openapi({
      description: "Tokens held by an address other than zero (of an ERC-1155, every edition's amounts together)",
    }),
    maxSupply: decimal.optional().openapi({
      description:
        "An ERC-721's max supply, from the chain (absent without one, or while the chain is down or slow); an edition's is on GET /collections/{address}/tokens/{tokenId}",
    }),
    holders: z.number().int().openapi({ description: "Addresses holding a token (of an ERC-1155, of any edition)" }),
    editions: z.array(EditionView).optional().openapi({
      description: "An ERC-1155's editions by id, the first 1,000 (then `editionsCursor`)",
    }),
    editionsCursor: z
      .string()
      .optional()
      .openapi({ description: "Present when there may be more editions: pass it as `?editionsCursor=`" }),
    deployedBlock: z.number().int().nullable(),
    indexedBlock: z.number().int().nullable().openapi({ description: "The block the index reflects" }),
    chainHead: z.number().int().nullable(),
    blockNumber: blockNumber.nullable(),
    chainStatus,
  })
  .openapi("Collection");

/**
 * A collection as answered: `head` is the chain's (the last one known, and chainStatus down, while
 * it does not answer); an ERC-1155's `editions` (a page) and `editionsCursor` when there may be more.
 */
export function collectionView(
  record: CollectionRecord,
  head: KnownHead,
  kind: CollectionStandard,
  editions?: { page: EditionSummary[]; cursor?: string },
  paymentToken?: PaymentToken,
  maxSupply?: bigint,
) {
  return {
    chainId: record.chainId,
    address: checksummed(record.address),
    name: record.name,
    symbol: record.symbol,
    standard: kind,
    ...(paymentToken ? { paymentToken } : {}),
    totalSupply: record.supply.toString(),
    ...(maxSupply !== undefined ? { maxSupply: maxSupply.toString() } : {}),
    holders: Number(record.holders),
    ...(editions
      ? {
          editions: editions.page.map((e) => ({
            tokenId: e.tokenId,
            supply: e.supply.toString(),
            holders: Number(e.holders),
          })),
          ...(editions.cursor ? { editionsCursor: editions.cursor } : {}),
        }
      : {}),
    deployedBlock: record.deployedBlock,
    indexedBlock: record.indexedBlock,
    chainHead: head.blockNumber,
    blockNumber: record.indexedBlock,
    ...(head.down ? { chainStatus: "down" as const } : {}),
  };
}

/** Error responses every index read can answer. */
export function readErrors(extra: Record<number, ReturnType<typeof errorResponse>> = {}) {
  return {
    400: errorResponse("VALIDATION_ERROR"),
    401: errorResponse("UNAUTHORIZED"),
    403: errorResponse("FORBIDDEN"),
    404: errorResponse("COLLECTION_NOT_FOUND"),
    429: errorResponse("RATE_LIMITED"),
    503: errorResponse("INDEX_BEHIND (with Retry-After), STORE_UNAVAILABLE"),
    ...extra,
  };
}
