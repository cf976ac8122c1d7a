import type { FeeData, Provider } from "ethers";

/** How long one fee quote serves; ethers' maxFeePerGas (2 × base fee + tip) absorbs several blocks of rise. */
const FEE_QUOTE_TTL_MS = 1_000;

/** The fee fields of a transaction: EIP-1559 where the chain has a base fee, a gas price otherwise. */
export type Fees = { type: 2; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | { type: 0; gasPrice: bigint };

/** Replacements must outbid what they replace by at least this much (12.5%, what nodes require at most). */
const BUMP_NUMERATOR = 9n;
const BUMP_DENOMINATOR = 8n;

/**
 * Fee quotes for new transactions. Concurrent writes share one quote (three JSON-RPC calls in
 * ethers' getFeeData) instead of each asking the node again. MAX_FEE_PER_GAS caps every quote.
 */
export class FeeOracle {
  private quoted?: { at: number; fees: Promise<FeeData> };

  constructor(
    private readonly provider: Provider,
    private readonly maxFeePerGas?: bigint,
  ) {}

  /** The current quote, capped; `fresh` skips the shared one (a fee bump must see the spike). */
  async quote(fresh = false): Promise<Fees> {
    const now = Date.now();
    if (fresh || !this.quoted || now - this.quoted.at > FEE_QUOTE_TTL_MS) {
      const fees = this.provider.getFeeData();
      this.quoted = { at: now, fees };
      fees.catch(() => (this.quoted = undefined)); // a failed quote is not served again
    }
    const fees = await this.quoted.fees;
    if (fees.maxFeePerGas != null && fees.maxPriorityFeePerGas != null) {
      const maxFeePerGas = this.cap(fees.maxFeePerGas);
      return { type: 2, maxFeePerGas, maxPriorityFeePerGas: min(fees.maxPriorityFeePerGas, maxFeePerGas) };
    }
    return { type: 0, gasPrice: this.cap(fees.gasPrice ?? 0n) };
  }

  /**
   * Fees for a replacement of `old`: at least 12.5% above it and at least the current quote, never
   * above MAX_FEE_PER_GAS. Null when the cap leaves no room for the bump nodes require.
   */
  async bump(old: Fees): Promise<Fees | null> {
    const quote = await this.quote(true);
    const raise = (value: bigint) => (value * BUMP_NUMERATOR + BUMP_DENOMINATOR - 1n) / BUMP_DENOMINATOR;
    if (old.type === 2) {
      const floor = raise(old.maxFeePerGas);
      const quoted = quote.type === 2 ? quote.maxFeePerGas : quote.gasPrice;
      const maxFeePerGas = this.cap(max(floor, quoted));
      if (maxFeePerGas < floor) return null;
      const quotedTip = quote.type === 2 ? quote.maxPriorityFeePerGas : 0n;
      const tip = min(max(raise(old.maxPriorityFeePerGas), quotedTip), maxFeePerGas);
      return { type: 2, maxFeePerGas, maxPriorityFeePerGas: tip };
    }
    const floor = raise(old.gasPrice);
    const gasPrice = this.cap(max(floor, quote.type === 0 ? quote.gasPrice : quote.maxFeePerGas));
    return gasPrice < floor ? null : { type: 0, gasPrice };
  }

  private cap(value: bigint): bigint {
    return this.maxFeePerGas !== undefined && value > this.maxFeePerGas ? this.maxFeePerGas : value;
  }
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);
const min = (a: bigint, b: bigint) => (a < b ? a : b);
