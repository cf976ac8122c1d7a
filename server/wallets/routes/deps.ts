import type { Context } from "koa";
import type { z } from "zod";
import type { AccessControl, AuditLog } from "../../access";
import type { ChainClient } from "../../chain/chain-client";
import { toChainApiError } from "../../chain/chain-errors";
import { ApiError, walletNotFound } from "../../http/errors";
import { parseInput } from "../../http/validation";
import { utcDay } from "../spend-limit";
import type { WalletRecord } from "../wallet-store";
import type { Wallets } from "../wallets";
import { WalletParams, type CreatedWallet, type WalletPolicy, type WalletView } from "./schemas";

/** What every /wallets route needs, built once by createWalletRouter. */
export interface WalletRouteDeps {
  access: AccessControl;
  audit: AuditLog;
  chain: ChainClient;
  wallets: Wallets;
}

export const MANAGE = { scope: "wallets:manage", key: "always" } as const;
export const READ = { scope: "wallets:read", key: "always" } as const;
/** The same, for routes naming a wallet in their path: the key must be allowed that wallet. */
export const MANAGE_ONE = { ...MANAGE, params: { wallet: "address" } } as const;
export const READ_ONE = { ...READ, params: { wallet: "address" } } as const;

/**
 * The wallet the path names; 404 WALLET_NOT_FOUND when the service does not hold it (or the key may
 * not use it: the router answered so already).
 */
export async function walletOfPath(ctx: Context, deps: WalletRouteDeps): Promise<WalletRecord> {
  const { address } = parseInput(WalletParams, ctx.params);
  const wallet = await deps.wallets.store.find(address);
  if (!wallet) throw walletNotFound();
  return wallet;
}

export function createdView(wallet: WalletRecord): z.infer<typeof CreatedWallet> {
  return {
    address: wallet.address,
    label: wallet.label,
    kind: wallet.kind,
    ...(wallet.keyLabel !== null ? { keyLabel: wallet.keyLabel } : {}),
    createdAt: wallet.createdAt.toISOString(),
  };
}

/** A wallet's policy and what it has committed today. */
export async function policyView(wallet: WalletRecord, deps: WalletRouteDeps): Promise<z.infer<typeof WalletPolicy>> {
  const spent = await deps.wallets.store.spentOn([wallet.address], utcDay(new Date()));
  return policyOf(wallet, spent.get(wallet.address) ?? 0n);
}

function policyOf(wallet: WalletRecord, spentToday: bigint): z.infer<typeof WalletPolicy> {
  return {
    dailySpendLimit: wallet.dailySpendLimit?.toString() ?? null,
    lowBalance: wallet.lowBalance?.toString() ?? null,
    spentToday: spentToday.toString(),
  };
}

/**
 * The wallets as GET shows them: with their balance and next nonce from the chain (one JSON-RPC
 * batch for all of them), their unfinished operations and today's spend (one query each).
 */
export async function walletViews(
  wallets: WalletRecord[],
  deps: WalletRouteDeps,
): Promise<z.infer<typeof WalletView>[]> {
  if (wallets.length === 0) return [];
  const addresses = wallets.map((w) => w.address);
  const chainId = deps.chain.options.chainId.toString();
  const [answers, unfinished, spent] = await Promise.all([
    deps.chain.rpc
      .batch(
        addresses.flatMap(
          (a) =>
            [
              ["eth_getBalance", [a, "latest"]],
              ["eth_getTransactionCount", [a, "pending"]],
            ] as [string, unknown[]][],
        ),
      )
      .catch((err: unknown) => {
        throw toChainApiError(err);
      }),
    deps.wallets.store.unfinished(chainId, addresses),
    deps.wallets.store.spentOn(addresses, utcDay(new Date())),
  ]);
  return wallets.map((wallet, i) => {
    const [balance, pending] = [answers[2 * i], answers[2 * i + 1]];
    if (!("result" in balance) || !("result" in pending))
      throw new ApiError("CHAIN_UNAVAILABLE", "The chain did not answer the wallet's balance and nonce");
    const ops = unfinished.get(wallet.address);
    const pendingCount = Number(BigInt(pending.result as string));
    return {
      ...createdView(wallet),
      balance: BigInt(balance.result as string).toString(),
      // Past what the node has seen, and past every nonce our own unfinished operations hold.
      nextNonce: Math.max(pendingCount, ops?.highestNonce == null ? 0 : ops.highestNonce + 1),
      unfinishedOperations: ops?.count ?? 0,
      policy: policyOf(wallet, spent.get(wallet.address) ?? 0n),
    };
  });
}
