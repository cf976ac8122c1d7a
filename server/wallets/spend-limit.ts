import type { SpendGuard, SpendRefund } from "../engine";
import { ApiError } from "../http/errors";
import type { TransactionSigner } from "../signers/signer";
import type { HeldWalletSigners } from "./held-wallets";
import { policyOn, type WalletStore } from "./wallet-store";

/** The UTC day of `at`, as the store's date ("2026-11-23"). */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/**
 * A wallet's `dailySpendLimit`: wei of value plus gas at the signed max fee, per UTC day. The engine
 * asks before a write takes its nonce; the reservation is one atomic UPDATE in the store (an INSERT
 * for the day's first), so concurrent writes on any number of instances never pass the limit
 * together, and a write that sends nothing gives its reservation back. The limit is the wallet's as
 * looked up (a change reaches every instance within WALLET_CACHE_MS). Request keys and wallets
 * without a limit cost nothing. Limit and spend are per chain: each chain's engine has its own guard.
 */
export class DailySpendLimit implements SpendGuard {
  constructor(
    private readonly store: WalletStore,
    private readonly wallets: HeldWalletSigners,
    /** The chain whose spend this guard counts (decimal id). */
    private readonly chainId: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async reserve(signer: TransactionSigner, wei: bigint): Promise<SpendRefund | undefined> {
    if (signer.kind === "request") return undefined;
    const wallet = await this.wallets.find(signer.address);
    const limit = wallet ? policyOn(wallet, this.chainId).dailySpendLimit : null;
    if (!wallet || limit === null) return undefined;
    const day = utcDay(this.now());
    if (!(await this.store.reserveSpend(wallet.address, this.chainId, day, wei, limit))) {
      const spent = (await this.store.spentOn([wallet.address], this.chainId, day)).get(wallet.address) ?? 0n;
      throw new ApiError(
        "SPEND_LIMIT_EXCEEDED",
        `This write may cost up to ${wei} wei (value plus gas at its max fee); wallet ${wallet.label} has ` +
          `${spent} wei committed today (UTC) on chain ${this.chainId} against a daily limit of ${limit} wei`,
      );
    }
    return () => this.store.releaseSpend(wallet.address, this.chainId, day, wei);
  }
}
