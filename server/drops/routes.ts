/** The drop reads beside /collections (API.md, "Drops"): an allowlist, one account's leaf and proof, a voucher's state. */
import Router from "@koa/router";
import { toQuantity } from "ethers";
import { z } from "zod";
import type { AccessControl } from "../access";
import type { ChainClient } from "../chain/chain-client";
import { collectionInterface } from "../chain/collection";
import { OPEN_SECURITY } from "../collections/routes/common";
import { ApiError } from "../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../http/openapi";
import { parseInput } from "../http/validation";
import { address, decimal } from "../nft/fields";
import type { DropsDeps } from "../nft/route";
import { voucherJson } from "./voucher";

export interface DropsRouteDeps {
  chain: ChainClient;
  access: AccessControl;
  drops: DropsDeps;
}

const READ = { scope: "nft:read", key: "open", params: { collection: "address" } } as const;
const CollectionPath = z.object({ address: address("address") });
const AccountPath = z.object({ address: address("address"), account: address("account") });
const VoucherPath = z.object({
  address: address("address"),
  id: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "id must be 32 bytes of hex (0x…)"),
});

/** NOT_ALLOWLISTED is 403 for a mint; a read of an account not listed is 404 (API.md, "Error codes"). */
class NotListed extends ApiError {
  override readonly status = 404;
}

const AllowlistView = z
  .object({ root: z.string(), entries: z.number().int(), operationId: z.string().nullable(), createdAt: z.string() })
  .openapi("Allowlist");
const AllowlistLeafView = z
  .object({
    account: z.string(),
    allowance: decimal,
    price: decimal,
    minted: decimal.openapi({ description: "Allowlist mints of the account, counted on chain" }),
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

export function createDropsRouter({ chain, access, drops }: DropsRouteDeps): Router {
  const router = new Router();
  router.get("/collections/:address/allowlist", access.require(READ), async (ctx) => {
    const { address: at } = parseInput(CollectionPath, ctx.params);
    const stored = await drops.allowlists.find(at);
    if (!stored) throw new ApiError("NOT_FOUND", `The service keeps no allowlist for ${at}`);
    ctx.body = stored;
  });
  router.get("/collections/:address/allowlist/:account", access.require(READ), async (ctx) => {
    const { address: at, account } = parseInput(AccountPath, ctx.params);
    const leaf = await drops.allowlists.leaf(at, account);
    if (!leaf) throw new NotListed("NOT_ALLOWLISTED", `${account} is not on the allowlist of ${at}`);
    const minted = await chain.read(at, () => chain.view(at, "allowlistMinted", [account]));
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
    if (!voucher) throw new ApiError("NOT_FOUND", `The service signed no voucher ${id} for ${at}`);
    const [used, head] = await chain.read(at, () =>
      Promise.all([
        chain.view(at, "voucherUsed", [id]),
        chain.rpc.call<{ timestamp: string }>("eth_getBlockByNumber", ["latest", false]),
      ]),
    );
    const body = { id: voucher.id, voucher: voucherJson(voucher) };
    if (used) {
      // The redemption is after the voucher was signed: its VoucherRedeemed(id indexed, …) from that block on.
      const topic = collectionInterface().getEvent("VoucherRedeemed")!.topicHash;
      const logs = await chain.rpc.call<{ transactionHash: string; blockNumber: string }[]>("eth_getLogs", [
        { address: at, fromBlock: toQuantity(voucher.signedBlock), toBlock: "latest", topics: [topic, voucher.id] },
      ]);
      const log = logs[0];
      ctx.body = {
        ...body,
        state: "used",
        ...(log ? { transactionHash: log.transactionHash, blockNumber: Number(BigInt(log.blockNumber)) } : {}),
      };
      return;
    }
    ctx.body = { ...body, state: BigInt(head.timestamp) > voucher.validUntil ? "expired" : "unused" };
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
    503: errorResponse("CHAIN_UNAVAILABLE, STORE_UNAVAILABLE"),
  };
  registry.registerPath({
    ...common,
    method: "get",
    path: "/collections/{address}/allowlist",
    operationId: "getAllowlist",
    summary: "The allowlist the service keeps for a collection: its root, size and operation",
    request: { params: CollectionPath },
    responses: {
      200: { description: "The allowlist", content: { "application/json": { schema: AllowlistView } } },
      ...errors,
      404: errorResponse("NOT_FOUND"),
    },
  });
  registry.registerPath({
    ...common,
    method: "get",
    path: "/collections/{address}/allowlist/{account}",
    operationId: "getAllowlistEntry",
    summary: "An account's allowlist entry, its mints so far and its Merkle proof (from the store)",
    request: { params: AccountPath },
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
    request: { params: VoucherPath },
    responses: {
      200: { description: "The voucher's state", content: { "application/json": { schema: VoucherStateView } } },
      ...errors,
      404: errorResponse("NOT_FOUND"),
    },
  });
}
