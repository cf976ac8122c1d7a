import { toQuantity } from "ethers";
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

/** Items estimated beside one to find the gas each adds: few enough to be cheap to estimate. */
const SLOPE_ITEMS = 11;

/**
 * Checks that the whole batch fits one transaction under MAX_GAS_PER_TX, else 413
 * TOO_LARGE_FOR_ONE_TRANSACTION naming how many items fit (the longest prefix that does). A batch's
 * gas is about linear in its items (each recipient or address costs the same), so two small
 * estimates place the cap, and one or two near it confirm the count; a bisection over
 * eth_estimateGas settles what the line did not. A batch that would revert for another reason
 * answers that reason's error, as the write's own simulation would.
 */
export async function checkOneTransaction(chain: ChainClient, config: DropsConfig, batch: Batch): Promise<void> {
  const max = await maxGasPerTx(chain, config);
  /** The gas of the first `n` items; undefined when it runs out of gas (past the node's cap). */
  const gasOf = async (n: number): Promise<bigint | undefined> => {
    const data = batch.encode(n);
    try {
      return BigInt(
        // Capped at MAX_GAS_PER_TX: the question is whether it fits, and a node's search for more (up
        // to the block's limit) costs it several runs of a batch that does not.
        await chain.rpc.call<string>("eth_estimateGas", [
          { from: batch.from, to: batch.to, data, gas: toQuantity(max) },
          "latest",
        ]),
      );
    } catch (err) {
      if (isOutOfGas(err)) return undefined;
      await chain.simulate({ from: batch.from, to: batch.to, data }); // throws the revert's own API error
      throw err;
    }
  };
  let low = 0; // fits (none trivially does)
  let high = batch.count; // does not fit, once the whole list is found too large
  const tried = async (n: number): Promise<bigint | undefined> => {
    const gas = await gasOf(n);
    if (gas !== undefined && gas <= max) low = Math.max(low, n);
    else high = Math.min(high, n);
    return gas;
  };
  await tried(batch.count);
  if (low === batch.count) return;
  const one = high > 1 ? await tried(1) : undefined;
  const some = low === 1 && high > 2 ? await tried(Math.min(SLOPE_ITEMS, high - 1)) : undefined;
  if (one !== undefined && some !== undefined && low > 1) {
    // Where the line through the two crosses the cap, then its neighbour: most lists end here.
    const perItem = (some - one) / BigInt(low - 1);
    const guess = perItem > 0n ? 1 + Number((max - one) / perItem) : high - 1;
    const n = Math.max(low + 1, Math.min(guess, high - 1));
    if (n < high) {
      await tried(n);
      if (low === n && n + 1 < high) await tried(n + 1);
      else if (high === n && n - 1 > low) await tried(n - 1);
    }
  }
  while (high - low > 1) await tried(Math.floor((low + high) / 2));
  throw new ApiError(
    "TOO_LARGE_FOR_ONE_TRANSACTION",
    `${batch.count} ${batch.field} take more than MAX_GAS_PER_TX (${max} gas) in one transaction: ${low} fit. Send them in parts, or as a job (POST /jobs)`,
    [{ path: batch.field, message: `at most ${low} fit in one transaction` }],
  );
}
