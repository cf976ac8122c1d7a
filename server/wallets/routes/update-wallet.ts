import type Router from "@koa/router";
import { auditActor, type AccessPrincipal } from "../../access";
import { ApiError, walletNotFound } from "../../http/errors";
import { readJsonBody } from "../../http/json-body";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseBody } from "../../http/validation";
import { WalletExists, type WalletChanges, type WalletRecord } from "../wallet-store";
import { createdView, MANAGE_ONE, policyView, walletOfPath, type WalletRouteDeps } from "./deps";
import { UpdatedWallet, UpdateWalletRequest, WalletParams } from "./schemas";

/** PATCH /wallets/{address}: a new label, and the policy (dailySpendLimit, lowBalance; null removes one). */
export function mountUpdateWallet(router: Router, deps: WalletRouteDeps): void {
  const { access, audit, wallets } = deps;
  router.patch("/wallets/:address", access.require(MANAGE_ONE), async (ctx) => {
    const wallet = await walletOfPath(ctx, deps);
    const raw = await readJsonBody(ctx);
    // The chain the body names is the key's before anything else of the body is looked at.
    const named = typeof raw === "object" && raw !== null ? (raw as { chain?: unknown }).chain : undefined;
    if (named !== undefined && named !== null) access.checkChain(ctx, deps.chains.resolve(named));
    const body = parseBody(UpdateWalletRequest, raw);
    // The top-level policy fields are the named chain's, the only chain's, or every chain's (*).
    const unit = body.chain !== undefined ? deps.chains.resolve(body.chain) : deps.chains.only;
    if (unit) access.checkChain(ctx, unit);
    const checked = (named: { id: string; name: string }) => (access.checkChain(ctx, named), named.id);
    const changes: WalletChanges = {
      label: body.label,
      dailySpendLimit: body.dailySpendLimit,
      lowBalance: body.lowBalance,
      chain: unit?.id ?? "*",
      policies: body.policy
        ? Object.fromEntries(
            Object.entries(body.policy).map(([chain, policy]) => [
              chain === "*" ? "*" : checked(deps.chains.resolve(chain)),
              policy,
            ]),
          )
        : undefined,
    };
    const everyChain =
      changes.policies?.["*"] !== undefined ||
      (changes.chain === "*" && (changes.dailySpendLimit !== undefined || changes.lowBalance !== undefined));
    // "*" applies to every chain without its own policy, those the key lacks too.
    if (everyChain && (ctx.state.access as AccessPrincipal | undefined)?.chains)
      throw new ApiError(
        "FORBIDDEN",
        'This access key does not hold every chain: it may not set the "*" policy, only its own chains\' (by id or name)',
        [{ path: "policy", message: '"*": not within this key\'s chains' }],
      );
    const updated = await wallets.db
      .transaction(async (tx) => {
        const after = await wallets.store.update(tx, wallet.address, changes);
        if (!after) throw walletNotFound();
        await audit.record(tx, auditActor(ctx), {
          action: "wallet.updated",
          targetType: "wallet",
          targetId: wallet.address,
          details: changed(wallet, after, changes, unit?.id ?? "*"),
        });
        return after;
      })
      .catch((err: unknown) => {
        if (err instanceof WalletExists)
          throw new ApiError("WALLET_EXISTS", "A wallet with this label is already held", [
            { path: "label", message: "already held" },
          ]);
        throw err;
      });
    wallets.signers.forgetAll();
    // No chain call: the change is made, whatever the chain does now.
    ctx.body = { ...createdView(updated), ...(unit ? { policy: await policyView(updated, unit, deps) } : {}) };
  });
}

/** What changed, before and after, for the audit trail. */
function changed(
  before: WalletRecord,
  after: WalletRecord,
  changes: WalletChanges,
  chain: string,
): Record<string, unknown> {
  const wei = (v: bigint | null | undefined) => (v == null ? null : v.toString());
  const details: Record<string, unknown> = {};
  if (changes.label !== undefined) details.label = { from: before.label, to: after.label };
  const policies = { ...changes.policies };
  if (changes.dailySpendLimit !== undefined || changes.lowBalance !== undefined)
    policies[chain] = { dailySpendLimit: changes.dailySpendLimit, lowBalance: changes.lowBalance };
  for (const [id, policy] of Object.entries(policies)) {
    // One chain's form keeps its audit details as before; several chains' are by chain.
    const into =
      id === chain && !changes.policies ? details : ((details[`chain:${id}`] = {}) as Record<string, unknown>);
    for (const field of ["dailySpendLimit", "lowBalance"] as const)
      if (policy[field] !== undefined)
        into[field] = { from: wei(before.policies[id]?.[field]), to: wei(after.policies[id]?.[field]) };
  }
  return details;
}

export function registerUpdateWalletOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "patch",
    path: "/wallets/{address}",
    operationId: "updateWallet",
    tags: ["wallets"],
    summary: "Relabel a wallet or set its policy: dailySpendLimit and lowBalance in wei (null removes one)",
    description: "Scope wallets:manage. A new limit applies to the next write, on every instance within 1 s.",
    security: [{ AccessKey: [] }],
    request: {
      params: WalletParams,
      body: { required: true, content: { "application/json": { schema: UpdateWalletRequest } } },
    },
    responses: {
      200: { description: "The wallet and its policy now", content: { "application/json": { schema: UpdatedWallet } } },
      400: errorResponse("VALIDATION_ERROR"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      404: errorResponse("WALLET_NOT_FOUND, CHAIN_NOT_FOUND"),
      409: errorResponse("WALLET_EXISTS"),
      429: errorResponse("RATE_LIMITED"),
    },
  });
}
