/** The metadata reads and the upload (API.md, "Metadata"); the writes are in write-routes.ts. */
import Router from "@koa/router";
import { z } from "zod";
import type { Context } from "koa";
import type { AccessControl, AccessPrincipal } from "../access";
import { allows } from "../access/principal";
import type { ChainClient, Standard } from "../chain/chain-client";
import type { CollectionIndex } from "../collections";
import { ChainQuery, OPEN_SECURITY } from "../http/fields";
import { ApiError } from "../http/errors";
import { readJsonBody } from "../http/json-body";
import { errorResponse, type OpenAPIRegistry } from "../http/openapi";
import { parseInput } from "../http/validation";
import { address } from "../http/fields";
import type { MetadataDeps } from "./deps";
import { METADATA_BODY_LIMIT, MetadataDocument, PutMetadataBody, checkUpload } from "./documents";
import { revealedDocumentId } from "./provenance";

export interface MetadataRouteDeps {
  chain: ChainClient;
  access: AccessControl;
  metadata: MetadataDeps;
  index?: CollectionIndex;
}

const CollectionPath = z.object({ address: address("address") });
const ServePath = z.object({
  chainId: z.string().regex(/^\d{1,20}$/, "chainId must be a decimal chain id"),
  address: address("address"),
  tokenId: z
    .string()
    .regex(/^[0-9]{1,20}(\.json)?$/, "tokenId must be a token id, optionally followed by .json")
    .transform((v) => BigInt(v.replace(/\.json$/, ""))),
});
const PageQuery = ChainQuery.extend({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z
    .string()
    .regex(/^\d{1,20}$/, "cursor is what an earlier answer gave")
    .optional(),
});

const CONFIGURE = { scope: "nft:configure", key: "always", params: { collection: "address" } } as const;
const READ = { scope: "nft:read", key: "open", params: { collection: "address" } } as const;
/** API.md: public, cacheable for a minute by marketplaces and CDNs. */
const CACHE_CONTROL = "public, max-age=60";

const MetadataState = z
  .object({
    chainId: z.string(),
    address: z.string(),
    standard: z.enum(["erc721", "erc1155"]).nullable().openapi({
      description:
        "erc1155: an edition contract, whose documents are served per edition id as uploaded (no reveal); null: no collection at the address",
    }),
    state: z.enum(["hidden", "committed", "revealed"]).openapi({
      description: "An edition contract (erc1155) has no reveal: its state is always revealed",
    }),
    count: z.number().int(),
    provenance: z.string().nullable(),
    revealBlock: z.string().nullable(),
    startingIndex: z.string().nullable(),
    rootCid: z.string().nullable(),
    placeholder: MetadataDocument.nullable(),
    tokens: z.array(z.record(z.string(), z.unknown())).optional(),
    cursor: z.string().nullable().optional(),
  })
  .openapi("MetadataState");

/**
 * Whether the request's key may change the metadata of `at` and see its documents before the
 * reveal: it has nft:configure, and may use a wallet that is the collection's owner() (what the
 * allowlist asks of its signer); a key with no wallet limit may use any. One view call.
 */
async function keyOwns(ctx: Context, chain: ChainClient, at: string): Promise<{ owns: boolean; owner?: string }> {
  const principal = ctx.state.access as AccessPrincipal | undefined;
  if (!principal?.scopes.has("nft:configure")) return { owns: false };
  // 404 CONTRACT_NOT_FOUND, 422 for what has no owner().
  const owner = await chain.read(at, () => chain.view(at, "owner", []));
  return { owns: allows(principal, { wallet: owner }), owner };
}

/** The standard of `at`, or null when it holds no collection (the state of such an address is still answered). */
async function standardOf(chain: ChainClient, at: string): Promise<Standard | null> {
  try {
    return await chain.standardOf(at);
  } catch (err) {
    if (err instanceof ApiError && err.code === "CHAIN_UNAVAILABLE") throw err;
    return null;
  }
}

export function createMetadataRouter(deps: MetadataRouteDeps): Router {
  const { access, metadata, chain } = deps;
  const { service } = metadata;
  const router = new Router();

  router.put("/collections/:address/metadata", access.require(CONFIGURE), async (ctx) => {
    const { address: at } = parseInput(CollectionPath, ctx.params);
    // The owner before the body: another key's 10 MB is not read.
    const { owns, owner } = await keyOwns(ctx, chain, at);
    if (!owns)
      throw new ApiError(
        "FORBIDDEN",
        `This access key may not change the metadata of ${at}: it does not hold its owner, ${owner}`,
        [{ path: "wallet", message: `the collection's owner ${owner?.toLowerCase()}` }],
      );
    const upload = checkUpload(await readJsonBody(ctx, METADATA_BODY_LIMIT));
    const count = await service.store.put(service.chainId, at, upload);
    service.drop(at);
    if (deps.index) await deps.index.register(at, "request"); // minted tokens come from the index
    ctx.body = {
      chainId: service.chainId,
      address: at,
      count,
      stored: upload.tokens.length,
      placeholder: upload.placeholder !== undefined,
    };
  });

  router.get("/collections/:address/metadata", access.require(READ), async (ctx) => {
    const { address: at } = parseInput(CollectionPath, ctx.params);
    const page = parseInput(PageQuery, ctx.query);
    const [{ record, reveal }, standard] = await Promise.all([service.state(at), standardOf(chain, at)]);
    // An edition's documents are served as uploaded: nothing is hidden, nothing waits for a reveal.
    const state =
      reveal.revealed || standard === "erc1155"
        ? "revealed"
        : record?.frozen || reveal.count > 0n
          ? "committed"
          : "hidden";
    // Before the reveal the documents are the owner's alone: no trait leaves through another key.
    const mayList = record !== null && (state === "revealed" || (await keyOwns(ctx, chain, at)).owns);
    const body: Record<string, unknown> = {
      chainId: service.chainId,
      address: at,
      standard,
      state,
      count: record?.documents ?? 0,
      provenance: reveal.provenance ?? record?.provenance ?? null,
      revealBlock: reveal.revealBlock?.toString() ?? null,
      startingIndex: reveal.startingIndex?.toString() ?? null,
      rootCid: record?.rootCid ?? null,
      placeholder: record?.placeholder ? JSON.parse(record.placeholder) : null,
    };
    if (mayList && record) {
      const rows = await service.store.page(service.chainId, at, BigInt(page.cursor ?? "0"), page.limit);
      body.tokens = rows.map((row) => ({ tokenId: row.tokenId.toString(), ...JSON.parse(row.document) }));
      body.cursor = rows.length === page.limit ? rows[rows.length - 1].tokenId.toString() : null;
    }
    ctx.body = body;
  });

  router.get("/metadata/:chainId/:address/:tokenId", async (ctx) => {
    await metadata.limit?.take(ctx.ip);
    const { chainId, address: at, tokenId } = parseInput(ServePath, ctx.params);
    const bytes = await service.serve(chainId, at, tokenId);
    ctx.set("Cache-Control", CACHE_CONTROL);
    ctx.type = "application/json; charset=utf-8";
    ctx.body = bytes;
  });

  router.get("/collections/:address/metadata.car", access.require(READ), async (ctx) => {
    const { address: at } = parseInput(CollectionPath, ctx.params);
    const { record, reveal, standard } = await service.state(at);
    // An edition contract's documents are its editions' own, in order (no reveal, nothing hidden).
    const editions = standard === "erc1155" && record !== null && record.documents > 0;
    if (!editions && (!reveal.revealed || reveal.startingIndex === null || !record))
      throw new ApiError("METADATA_NOT_REVEALED", `${at} is not revealed: its CAR would show every token's traits`);
    const total = editions ? BigInt(record!.documents) : reveal.count;
    const count = Number(total);
    let root = record!.rootCid ?? "";
    let car = root ? metadata.cars.find(root) : undefined;
    if (!car) {
      const start = editions ? 0n : reveal.startingIndex!;
      const built = await metadata.cars.build(`${service.chainId}:${at.toLowerCase()}`, async () => {
        const documents = await service.store.documents(service.chainId, at);
        const document = (tokenId: number) => {
          const text = documents.get(revealedDocumentId(BigInt(tokenId), start, total));
          if (text === undefined) throw new ApiError("NOT_FOUND", `No document is uploaded for token ${tokenId}`);
          return Buffer.from(text);
        };
        return { count, document };
      });
      car = built.bytes;
      if (built.root !== root) {
        root = built.root;
        await service.store.setRootCid(service.chainId, at, root);
        service.drop(at);
      }
    }
    ctx.set("X-Root-CID", root);
    ctx.set("Access-Control-Expose-Headers", "X-Root-CID, ETag, X-Request-Id");
    ctx.set("Content-Disposition", `attachment; filename="${at}.car"`);
    ctx.type = "application/vnd.ipld.car; version=1";
    ctx.body = car;
  });
  return router;
}

export function registerMetadataOpenApi(registry: OpenAPIRegistry): void {
  const tags = ["metadata"];
  const errors = {
    400: errorResponse("VALIDATION_ERROR"),
    401: errorResponse("UNAUTHORIZED"),
    403: errorResponse("FORBIDDEN"),
    429: errorResponse("RATE_LIMITED"),
    503: errorResponse("CHAIN_UNAVAILABLE, STORE_UNAVAILABLE"),
  };
  registry.registerPath({
    method: "put",
    path: "/collections/{address}/metadata",
    operationId: "putMetadata",
    tags,
    security: [{ AccessKey: [] }],
    summary:
      "Upload token documents (up to 10,000 a request, 10 MB) and the placeholder; a repeat replaces the tokens it names",
    description:
      "Only a key with nft:configure that may use the collection owner's wallet (403 FORBIDDEN otherwise). Every bad token is named in one 400 (tokens.41.image), and nothing of the request is stored. 409 METADATA_FROZEN after the commit.",
    request: {
      params: CollectionPath,
      body: { required: true, content: { "application/json": { schema: PutMetadataBody } } },
    },
    responses: {
      200: {
        description: "Stored",
        content: {
          "application/json": {
            schema: z.object({
              chainId: z.string(),
              address: z.string(),
              count: z.number().int(),
              stored: z.number().int(),
              placeholder: z.boolean(),
            }),
          },
        },
      },
      ...errors,
      404: errorResponse("CONTRACT_NOT_FOUND"),
      409: errorResponse("METADATA_FROZEN"),
      422: errorResponse("UNSUPPORTED_CONTRACT"),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/collections/{address}/metadata",
    operationId: "getMetadata",
    tags,
    security: OPEN_SECURITY,
    summary:
      "A collection's metadata state (hidden, committed, revealed), provenance, starting index, root CID and its documents, paged",
    description:
      "Before the reveal the documents (tokens, cursor) are listed only to a key with nft:configure that may use the collection owner's wallet; any other key gets the rest.",
    request: { params: CollectionPath, query: PageQuery },
    responses: {
      200: { description: "The state", content: { "application/json": { schema: MetadataState } } },
      ...errors,
    },
  });
  registry.registerPath({
    method: "get",
    path: "/metadata/{chainId}/{address}/{tokenId}",
    operationId: "serveMetadata",
    tags,
    security: [{}],
    summary: "A token's document as wallets read it (tokenURI); also with a .json suffix",
    description:
      "Public, Cache-Control: public, max-age=60, with an ETag: the exact canonical bytes (RFC 8785). The placeholder before the reveal; after it, document ((t - 1 + startingIndex) mod count) + 1. On an ERC-1155 edition contract, edition t's own document once the edition has a token (no reveal).",
    request: { params: ServePath },
    responses: {
      200: { description: "The document", content: { "application/json": { schema: MetadataDocument } } },
      400: errorResponse("VALIDATION_ERROR"),
      404: errorResponse("TOKEN_NOT_FOUND, NOT_FOUND"),
      429: errorResponse("RATE_LIMITED"),
      503: errorResponse("CHAIN_UNAVAILABLE, STORE_UNAVAILABLE"),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/collections/{address}/metadata.car",
    operationId: "getMetadataCar",
    tags,
    security: OPEN_SECURITY,
    summary: "The revealed documents as a CAR v1: one UnixFS directory of 1.json … count.json; root CID in X-Root-CID",
    description:
      "409 METADATA_NOT_REVEALED before the reveal. An ERC-1155 edition contract has no reveal: its CAR holds each edition's document as uploaded (ids 1 to count).",
    request: { params: CollectionPath, query: ChainQuery },
    responses: {
      200: {
        description: "The CAR, streamed",
        headers: { "X-Root-CID": { schema: { type: "string" }, description: "The directory's CID (CIDv1)" } },
        content: { "application/vnd.ipld.car": { schema: { type: "string", format: "binary" } } },
      },
      ...errors,
      409: errorResponse("METADATA_NOT_REVEALED"),
    },
  });
}
