import type { FeeData, JsonRpcApiProvider } from "ethers";

/** How long one fee quote from the node serves concurrent writes. */
const FEE_QUOTE_TTL_MS = 1_000;
/**
 * How long a base fee learnt from one of our own receipts stands in for a quote. The quote is
 * 2 × base fee + tip, which absorbs five full blocks of rise (12.5% each at most).
 */
const OBSERVED_BASE_FEE_TTL_MS = 5_000;
/** How long the node's suggested tip (eth_maxPriorityFeePerGas) is reused. */
const TIP_TTL_MS = 60_000;

/** The fee fields of a transaction: EIP-1559 where the chain has a base fee, a gas price otherwise. */
export type Fees = { type: 2; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | { type: 0; gasPrice: bigint };

/** Replacements must outbid what they replace by at least this much (12.5%, what nodes require at most). */
const BUMP_NUMERATOR = 9n;
const BUMP_DENOMINATOR = 8n;

/**
 * Fee quotes for new transactions, capped by MAX_FEE_PER_GAS. Concurrent writes share one quote
 * from the node (ethers' getFeeData), and every receipt of ours tells the base fee of a recent
 * block for free (effective gas price − our tip): while writes keep confirming, quoting costs no
 * JSON-RPC call at all.
 */
export class FeeOracle {
  private quoted?: { at: number; fees: Promise<FeeData> };
  private observed?: { at: number; baseFee: bigint };
  private tip?: { at: number; value: bigint; asked?: Promise<bigint> };
  /** The head's base fee as the block feed knows it (free: it came with the head). */
  private headBaseFee?: () => bigint | undefined;

  constructor(
    private readonly provider: JsonRpcApiProvider,
    private readonly maxFeePerGas?: bigint,
  ) {}

  /**
   * Takes base fees from the chain's block feed: while the feed follows the head, a quote is the
   * head's base fee (2 × base fee + tip), with the node's tip asked once a minute: one fee quote per
   * block at most, and no call at all for most writes.
   */
  followHeads(baseFee: () => bigint | undefined): void {
    this.headBaseFee = baseFee;
  }

  /** The current quote, capped; `fresh` asks the node (a fee bump must see a spike). */
  async quote(fresh = false): Promise<Fees> {
    const now = Date.now();
    const { observed, tip } = this;
    if (!fresh && observed && tip && now - observed.at < OBSERVED_BASE_FEE_TTL_MS && now - tip.at < TIP_TTL_MS) {
      return this.eip1559(observed.baseFee * 2n + tip.value, tip.value);
    }
    const headBaseFee = fresh ? undefined : this.headBaseFee?.();
    if (headBaseFee !== undefined) {
      const value = await this.currentTip(now);
      return this.eip1559(headBaseFee * 2n + value, value);
    }
    if (fresh || !this.quoted || now - this.quoted.at > FEE_QUOTE_TTL_MS) {
      const fees = this.provider.getFeeData();
      this.quoted = { at: now, fees };
      fees.catch(() => (this.quoted = undefined)); // a failed quote is not served again
    }
    const fees = await this.quoted.fees;
    if (fees.maxFeePerGas != null && fees.maxPriorityFeePerGas != null) {
      this.tip = { at: now, value: fees.maxPriorityFeePerGas };
      return this.eip1559(fees.maxFeePerGas, fees.maxPriorityFeePerGas);
    }
    return { type: 0, gasPrice: this.cap(fees.gasPrice ?? 0n) };
  }

  /** The node's suggested tip, asked at most once a minute (concurrent writes share the question). */
  private async currentTip(now: number): Promise<bigint> {
    const tip = this.tip;
    if (tip && (tip.asked || now - tip.at < TIP_TTL_MS)) return tip.asked ?? tip.value;
    const asked = this.provider
      .send("eth_maxPriorityFeePerGas", [])
      .then((answer: string) => BigInt(answer))
      .then(
        (value) => {
          this.tip = { at: Date.now(), value };
          return value;
        },
        (err: unknown) => {
          if (this.tip?.asked === asked) this.tip = tip; // a failed question is not served again
          throw err;
        },
      );
    this.tip = { at: tip?.at ?? 0, value: tip?.value ?? 0n, asked };
    return asked;
  }

  /** Learns a recent base fee from a receipt of a type-2 transaction that paid its whole tip. */
  observe(effectiveGasPrice: bigint | null, paid: Fees): void {
    if (effectiveGasPrice === null || paid.type !== 2 || effectiveGasPrice >= paid.maxFeePerGas) return;
    const baseFee = effectiveGasPrice - paid.maxPriorityFeePerGas;
    if (baseFee >= 0n) this.observed = { at: Date.now(), baseFee };
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

  private eip1559(maxFee: bigint, tip: bigint): Fees {
    const maxFeePerGas = this.cap(maxFee);
    return { type: 2, maxFeePerGas, maxPriorityFeePerGas: min(tip, maxFeePerGas) };
  }

  private cap(value: bigint): bigint {
    return this.maxFeePerGas !== undefined && value > this.maxFeePerGas ? this.maxFeePerGas : value;
  }
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);
const min = (a: bigint, b: bigint) => (a < b ? a : b);
