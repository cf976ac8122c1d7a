import type { Context } from "koa";
import type { z } from "zod";
import type { AccessControl, AuditLog } from "../../access";
import type { ChainClient } from "../../chain/chain-client";
import type { ChainRegistry, RegisteredChain } from "../../chains/registry";
import { toChainApiError } from "../../chain/chain-errors";
import { ApiError, walletNotFound } from "../../http/errors";
import { parseInput } from "../../http/validation";
import { utcDay } from "../spend-limit";
import { policyOn, type WalletRecord } from "../wallet-store";
import type { Wallets } from "../wallets";
import { WalletParams, type CreatedWallet, type WalletOnChain, type WalletPolicy, type WalletView } from "./schemas";

/** What every /wallets route needs, built once by createWalletRouter. */
export interface WalletRouteDeps {
  access: AccessControl;
  audit: AuditLog;
  chains: ChainRegistry<WalletChain>;
  wallets: Wallets;
}

/** What the /wallets routes use of a chain's unit: its name and id, and its client for balances and nonces. */
export interface WalletChain extends RegisteredChain {
  readonly client: ChainClient;
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

/** A wallet's policy on `unit`'s chain and what it has committed there today. */
export async function policyView(
  wallet: WalletRecord,
  unit: WalletChain,
  deps: WalletRouteDeps,
): Promise<z.infer<typeof WalletPolicy>> {
  const spent = await deps.wallets.store.spentOn([wallet.address], unit.id, utcDay(new Date()));
  return policyOf(wallet, unit.id, spent.get(wallet.address) ?? 0n);
}

function policyOf(wallet: WalletRecord, chainId: string, spentToday: bigint): z.infer<typeof WalletPolicy> {
  const policy = policyOn(wallet, chainId);
  return {
    dailySpendLimit: policy.dailySpendLimit?.toString() ?? null,
    lowBalance: policy.lowBalance?.toString() ?? null,
    spentToday: spentToday.toString(),
  };
}

/**
 * The chain `?chain=` names (404 CHAIN_NOT_FOUND if none is configured by that id or name), else
 * the only chain; undefined when several are configured and the query names none.
 */
export function chainOfQuery(ctx: Context, deps: WalletRouteDeps): WalletChain | undefined {
  const named = Array.isArray(ctx.query.chain) ? ctx.query.chain[0] : ctx.query.chain;
  const unit = named === undefined || named === "" ? deps.chains.only : deps.chains.resolve(named);
  if (unit) deps.access.checkChain(ctx, unit);
  return unit;
}

/** The chains whose per-chain fields the key may read: its own (all, unlimited). */
export function chainsOfKey(ctx: Context, deps: WalletRouteDeps): readonly WalletChain[] {
  const chains = (ctx.state.access as { chains?: readonly string[] | null } | undefined)?.chains;
  return chains ? deps.chains.units.filter((unit) => chains.includes(unit.id)) : deps.chains.units;
}

/** The chain-side facts of `addresses` on one chain: balances and nonces (one JSON-RPC batch), unfinished operations, today's spend. */
async function chainFacts(addresses: string[], unit: WalletChain, deps: WalletRouteDeps) {
  // A chain known to be down is not waited on: the callers answer the store's facts alone, at once.
  if (unit.client.liveness.down) throw new ApiError("CHAIN_UNAVAILABLE", "The chain does not answer now");
  const [answers, unfinished, spent] = await Promise.all([
    unit.client.rpc
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
    deps.wallets.store.unfinished(unit.id, addresses),
    deps.wallets.store.spentOn(addresses, unit.id, utcDay(new Date())),
  ]);
  return addresses.map((address, i) => {
    const [balance, pending] = [answers[2 * i], answers[2 * i + 1]];
    if (!("result" in balance) || !("result" in pending))
      throw new ApiError("CHAIN_UNAVAILABLE", "The chain did not answer the wallet's balance and nonce");
    const ops = unfinished.get(address);
    const pendingCount = Number(BigInt(pending.result as string));
    return {
      balance: BigInt(balance.result as string).toString(),
      // Past what the node has seen, and past every nonce our own unfinished operations hold.
      nextNonce: Math.max(pendingCount, ops?.highestNonce == null ? 0 : ops.highestNonce + 1),
      unfinishedOperations: ops?.count ?? 0,
      spentToday: spent.get(address) ?? 0n,
    };
  });
}

/**
 * The wallets as GET shows them: with their balance and next nonce on `unit`'s chain (one JSON-RPC
 * batch for all of them), their unfinished operations and today's spend there (one query each).
 * Without a chain (several configured, none named) only what is the same on every chain.
 */
export async function walletViews(
  wallets: WalletRecord[],
  deps: WalletRouteDeps,
  unit: WalletChain | undefined,
): Promise<z.infer<typeof WalletView>[]> {
  if (wallets.length === 0) return [];
  if (!unit) return wallets.map((wallet) => createdView(wallet));
  const addresses = wallets.map((w) => w.address);
  const facts = await chainFacts(addresses, unit, deps).catch(async (err: unknown) => {
    if (!(err instanceof ApiError) || err.code !== "CHAIN_UNAVAILABLE") throw err;
    return undefined;
  });
  if (!facts) return storeViews(wallets, addresses, unit, deps);
  return wallets.map((wallet, i) => {
    const { spentToday, ...fact } = facts[i];
    return {
      ...createdView(wallet),
      chainId: unit.id,
      ...fact,
      policy: policyOf(wallet, unit.id, spentToday),
    };
  });
}

/** The wallets on a chain that does not answer: what the store knows (no balance, no nonce), chainStatus down. */
async function storeViews(
  wallets: WalletRecord[],
  addresses: string[],
  unit: WalletChain,
  deps: WalletRouteDeps,
): Promise<z.infer<typeof WalletView>[]> {
  const [unfinished, spent] = await Promise.all([
    deps.wallets.store.unfinished(unit.id, addresses),
    deps.wallets.store.spentOn(addresses, unit.id, utcDay(new Date())),
  ]);
  return wallets.map((wallet) => ({
    ...createdView(wallet),
    chainId: unit.id,
    unfinishedOperations: unfinished.get(wallet.address)?.count ?? 0,
    policy: policyOf(wallet, unit.id, spent.get(wallet.address) ?? 0n),
    chainStatus: "down" as const,
  }));
}

/**
 * One wallet on every configured chain (GET /wallets/{address}'s `chains`): a chain that does not
 * answer shows its store-side facts and no balance, and does not fail the others.
 */
export async function walletOnChains(
  wallet: WalletRecord,
  deps: WalletRouteDeps,
  units: readonly WalletChain[] = deps.chains.units,
): Promise<z.infer<typeof WalletOnChain>[]> {
  return Promise.all(
    units.map(async (unit) => {
      const policy = policyOn(wallet, unit.id);
      const limits = {
        dailySpendLimit: policy.dailySpendLimit?.toString() ?? null,
        lowBalance: policy.lowBalance?.toString() ?? null,
      };
      try {
        const [fact] = await chainFacts([wallet.address], unit, deps);
        const { unfinishedOperations, spentToday, ...rest } = fact;
        return {
          chainId: unit.id,
          ...rest,
          unfinished: unfinishedOperations,
          spentToday: spentToday.toString(),
          ...limits,
        };
      } catch (err) {
        if (!(err instanceof ApiError) || err.code !== "CHAIN_UNAVAILABLE") throw err;
        const [unfinished, spent] = await Promise.all([
          deps.wallets.store.unfinished(unit.id, [wallet.address]),
          deps.wallets.store.spentOn([wallet.address], unit.id, utcDay(new Date())),
        ]);
        return {
          chainId: unit.id,
          balance: null,
          nextNonce: null,
          unfinished: unfinished.get(wallet.address)?.count ?? 0,
          spentToday: (spent.get(wallet.address) ?? 0n).toString(),
          ...limits,
          chainStatus: "down" as const,
        };
      }
    }),
  );
}
