import type { ChainClient } from "../chain/chain-client";
import { isOutOfGas } from "../chain/chain-errors";
import { ApiError } from "../http/errors";

/** What the drop routes need beyond the /nft routes' own dependencies. */
export interface DropsConfig {
  /** MAX_GAS_PER_TX; unset = a third of the block gas limit (read once). */
  maxGasPerTx?: bigint;
}

/** A third of each chain's block gas limit, read once per chain (chains differ: 30M on one, 60M on another). */
const blockThirds = new WeakMap<ChainClient, Promise<bigint>>();

/** The most gas one batch transaction may take: MAX_GAS_PER_TX, else a third of the latest block's gas limit. */
export function maxGasPerTx(chain: ChainClient, config: DropsConfig): Promise<bigint> {
  if (config.maxGasPerTx !== undefined) return Promise.resolve(config.maxGasPerTx);
  let third = blockThirds.get(chain);
  if (!third) {
    third = chain.rpc
      .call<{ gasLimit: string }>("eth_getBlockByNumber", ["latest", false])
      .then((block) => BigInt(block.gasLimit) / 3n)
      .catch((err: unknown) => {
        blockThirds.delete(chain);
        throw err;
      });
    blockThirds.set(chain, third);
  }
  return third;
}

export interface Batch {
  from: string;
  to: string;
  /** How many items (recipients, addresses) the whole list has. */
  count: number;
  /** The calldata of the first `n` items. */
  encode(n: number): string;
  /** The body field that holds the list, named in the 413. */
  field: string;
}

/**
 * Checks that the whole batch fits one transaction under MAX_GAS_PER_TX, else 413
 * TOO_LARGE_FOR_ONE_TRANSACTION naming how many items fit (the longest prefix that does, found by
 * bisection over eth_estimateGas). A batch that would revert for another reason answers that
 * reason's error, as the write's own simulation would.
 */
export async function checkOneTransaction(chain: ChainClient, config: DropsConfig, batch: Batch): Promise<void> {
  const max = await maxGasPerTx(chain, config);
  /** The gas of the first `n` items; undefined when it runs out of gas (past the node's cap). */
  const gasOf = async (n: number): Promise<bigint | undefined> => {
    const data = batch.encode(n);
    try {
      return BigInt(
        await chain.rpc.call<string>("eth_estimateGas", [{ from: batch.from, to: batch.to, data }, "latest"]),
      );
    } catch (err) {
      if (isOutOfGas(err)) return undefined;
      await chain.simulate({ from: batch.from, to: batch.to, data }); // throws the revert's own API error
      throw err;
    }
  };
  const fits = (gas: bigint | undefined) => gas !== undefined && gas <= max;
  if (fits(await gasOf(batch.count))) return;
  let low = 0; // fits (none trivially does)
  let high = batch.count; // does not fit
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (fits(await gasOf(middle))) low = middle;
    else high = middle;
  }
  throw new ApiError(
    "TOO_LARGE_FOR_ONE_TRANSACTION",
    `${batch.count} ${batch.field} take more than MAX_GAS_PER_TX (${max} gas) in one transaction: ${low} fit. Send them in parts, or as a job (POST /jobs)`,
    [{ path: batch.field, message: `at most ${low} fit in one transaction` }],
  );
}
