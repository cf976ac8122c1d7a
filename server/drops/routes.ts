/** The drop reads beside /collections (API.md, "Drops"): an allowlist, one account's leaf and proof, a voucher's state. */
import Router from "@koa/router";
import { z } from "zod";
import type { AccessControl } from "../access";
import type { ChainClient } from "../chain/chain-client";
import type { CollectionIndex, CollectionRecord } from "../collections";
import { allowlistMinted, voucherRedemption } from "../collections/drop-events";
import { ChainQuery, OPEN_SECURITY } from "../http/fields";
import { erc721OnlyError } from "../chain/standard-guard";
import type { SqlExecutor } from "../db";
import { ApiError } from "../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../http/openapi";
import { parseInput } from "../http/validation";
import { address, decimal } from "../http/fields";
import type { DropsDeps } from "./deps";
import { voucherJson } from "./voucher";

export interface DropsRouteDeps {
  chain: ChainClient;
  access: AccessControl;
  drops: DropsDeps;
  /** Allowlist mints and voucher redemptions are read from the index (migration 23). */
  index: CollectionIndex;
}

const READ = { scope: "nft:read", key: "open", params: { collection: "address" } } as const;
const CollectionPath = z.object({ address: address("address") });
const AccountPath = z.object({ address: address("address"), account: address("account") });
const VoucherPath = z.object({
  address: address("address"),
  id: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "id must be 32 bytes of hex (0x…)"),
});

interface Head {
  number: number;
  timestamp: bigint;
}

/**
 * Runs `read` on the index of collection `at` once it reflects the chain's head as of now (a write
 * just answered is seen), registering the collection if the index does not follow it yet: the
 * index is waited for up to 5 s, then 503 INDEX_BEHIND with Retry-After.
 */
async function fromIndex<T>(
  { chain, index }: DropsRouteDeps,
  at: string,
  read: (db: SqlExecutor, record: CollectionRecord, head: Head) => Promise<T>,
): Promise<T> {
  const block = await chain.read(at, () =>
    chain.rpc.call<{ number: string; timestamp: string }>("eth_getBlockByNumber", ["latest", false]),
  );
  const head = { number: Number(BigInt(block.number)), timestamp: BigInt(block.timestamp) };
  const record = (await index.find(at)) ?? (await index.register(at, "request")).record;
  await index.atBlock(record, head.number);
  return index.store.snapshot(async (db) => {
    const now = await index.store.find(index.chainId, at.toLowerCase(), db);
    if (!now || now.indexedBlock === null || now.indexedBlock < head.number)
      throw new ApiError("INDEX_BEHIND", "The index was rolled back by a reorg; retry", undefined, {
        "Retry-After": "1",
      });
    return read(db, now, head);
  });
}

/**
 * Before a 404 of what the service keeps (no allowlist, no voucher): an edition contract never has
 * one, which a 400 naming the standard says better. Only on that path, so a found list costs no
 * chain call; an address the chain cannot tell about keeps its 404.
 */
async function refuseEditions(chain: ChainClient, at: string, what: string): Promise<void> {
  const standard = await chain.standardOf(at).catch(() => undefined);
  if (standard === "erc1155") throw erc721OnlyError(at, what);
}

/** NOT_ALLOWLISTED is 403 for a mint; a read of an account not listed is 404 (API.md, "Error codes"). */
class NotListed extends ApiError {
  override readonly status = 404;
}

const StoredList = z
  .object({ root: z.string(), entries: z.number().int(), operationId: z.string().nullable(), createdAt: z.string() })
  .openapi("StoredAllowlist");
const AllowlistView = z
  .object({
    root: z
      .string()
      .nullable()
      .openapi({ description: "The root on chain whose proofs are served; null until one confirms" }),
    entries: z.number().int(),
    operationId: z.string().nullable(),
    createdAt: z.string().nullable(),
    pending: StoredList.nullable().openapi({
      description: "The newest list whose setAllowlist operation is not confirmed yet; it becomes active when it is",
    }),
  })
  .openapi("Allowlist");
const AllowlistLeafView = z
  .object({
    account: z.string(),
    allowance: decimal,
    price: decimal,
    minted: decimal.openapi({
      description: "Allowlist mints of the account, from the index of its AllowlistMinted events (every root counted)",
    }),
    remaining: decimal,
    proof: z.array(z.string()),
  })
  .openapi("AllowlistLeaf");
const VoucherStateView = z
  .object({
    id: z.string(),
    state: z.enum(["unused", "used", "expired"]),
    voucher: z.object({
      to: z.string(),
      amount: z.string(),
      price: z.string(),
      validUntil: z.string(),
      id: z.string(),
    }),
    transactionHash: z.string().optional(),
    blockNumber: z.number().int().optional(),
  })
  .openapi("VoucherState");

export function createDropsRouter(deps: DropsRouteDeps): Router {
  const { access, drops } = deps;
  const router = new Router();
  router.get("/collections/:address/allowlist", access.require(READ), async (ctx) => {
    const { address: at } = parseInput(CollectionPath, ctx.params);
    const { active, pending } = await drops.allowlists.find(at);
    if (!active && !pending) await refuseEditions(deps.chain, at, "Allowlists are");
    if (!active && !pending)
      throw new ApiError(
        "ALLOWLIST_NOT_FOUND",
        `The service keeps no allowlist for ${at}: PUT /collections/${at}/allowlist sets one`,
      );
    ctx.body = {
      ...(active ?? { root: null, entries: 0, operationId: null, createdAt: null }),
      pending: pending ?? null,
    };
  });
  router.get("/collections/:address/allowlist/:account", access.require(READ), async (ctx) => {
    const { address: at, account } = parseInput(AccountPath, ctx.params);
    const leaf = await drops.allowlists.leaf(at, account);
    if (!leaf) await refuseEditions(deps.chain, at, "Allowlists are");
    if (!leaf) throw new NotListed("NOT_ALLOWLISTED", `${account} is not on the allowlist of ${at}`);
    const minted = await fromIndex(deps, at, (db, record) => allowlistMinted(db, record.id, account.toLowerCase()));
    ctx.body = {
      account,
      allowance: leaf.allowance.toString(),
      price: leaf.price.toString(),
      minted: minted.toString(),
      remaining: (leaf.allowance > minted ? leaf.allowance - minted : 0n).toString(),
      proof: leaf.proof,
    };
  });
  router.get("/collections/:address/vouchers/:id", access.require(READ), async (ctx) => {
    const { address: at, id } = parseInput(VoucherPath, ctx.params);
    const voucher = await drops.vouchers.find(at, id);
    if (!voucher) await refuseEditions(deps.chain, at, "Vouchers are");
    if (!voucher) throw new ApiError("VOUCHER_NOT_FOUND", `The service signed no voucher ${id} for ${at}`);
    const [redeemed, head] = await fromIndex(deps, at, async (db, record, head) => [
      await voucherRedemption(db, record.id, voucher.id.toLowerCase()),
      head,
    ]);
    const body = { id: voucher.id, voucher: voucherJson(voucher) };
    if (redeemed) ctx.body = { ...body, state: "used", ...redeemed };
    else ctx.body = { ...body, state: head.timestamp > voucher.validUntil ? "expired" : "unused" };
  });
  return router;
}

export function registerDropsOpenApi(registry: OpenAPIRegistry): void {
  const common = { tags: ["drops"], security: OPEN_SECURITY };
  const errors = {
    400: errorResponse("VALIDATION_ERROR"),
    401: errorResponse("UNAUTHORIZED"),
    403: errorResponse("FORBIDDEN"),
    429: errorResponse("RATE_LIMITED"),
    503: errorResponse("CHAIN_UNAVAILABLE, INDEX_BEHIND (with Retry-After), STORE_UNAVAILABLE"),
  };
  registry.registerPath({
    ...common,
    method: "get",
    path: "/collections/{address}/allowlist",
    operationId: "getAllowlist",
    summary:
      "The allowlist in force for a collection (its root on chain, size and operation), and the one pending beside it",
    request: { params: CollectionPath, query: ChainQuery },
    responses: {
      200: { description: "The allowlist", content: { "application/json": { schema: AllowlistView } } },
      ...errors,
      404: errorResponse("ALLOWLIST_NOT_FOUND"),
    },
  });
  registry.registerPath({
    ...common,
    method: "get",
    path: "/collections/{address}/allowlist/{account}",
    operationId: "getAllowlistEntry",
    summary: "An account's allowlist entry, its mints so far and its Merkle proof (from the store)",
    request: { params: AccountPath, query: ChainQuery },
    responses: {
      200: { description: "The entry", content: { "application/json": { schema: AllowlistLeafView } } },
      ...errors,
      404: errorResponse("NOT_ALLOWLISTED"),
    },
  });
  registry.registerPath({
    ...common,
    method: "get",
    path: "/collections/{address}/vouchers/{id}",
    operationId: "getVoucher",
    summary: "A voucher the service signed: unused, used (with the redeeming transaction) or expired",
    request: { params: VoucherPath, query: ChainQuery },
    responses: {
      200: { description: "The voucher's state", content: { "application/json": { schema: VoucherStateView } } },
      ...errors,
      404: errorResponse("VOUCHER_NOT_FOUND"),
    },
  });
}
