import type { FeeData, Provider, TransactionRequest } from "ethers";

/** How long one fee quote serves; ethers' maxFeePerGas (2 × base fee + tip) absorbs several blocks of rise. */
const FEE_QUOTE_TTL_MS = 1_000;

/**
 * Fee fields for new transactions. Concurrent writes share one quote (three JSON-RPC calls in
 * ethers' getFeeData) instead of each asking the node again.
 */
export class FeeOracle {
  private quote?: { at: number; fees: Promise<FeeData> };

  constructor(private readonly provider: Provider) {}

  async feeFields(): Promise<TransactionRequest> {
    const now = Date.now();
    if (!this.quote || now - this.quote.at > FEE_QUOTE_TTL_MS) {
      const fees = this.provider.getFeeData();
      this.quote = { at: now, fees };
      fees.catch(() => (this.quote = undefined)); // a failed quote is not served again
    }
    const fees = await this.quote.fees;
    return fees.maxFeePerGas != null && fees.maxPriorityFeePerGas != null
      ? { type: 2, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas }
      : { type: 0, gasPrice: fees.gasPrice ?? 0n };
  }
}
