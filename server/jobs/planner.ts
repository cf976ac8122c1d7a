import { randomBytes } from "node:crypto";
import { getAddress, hexlify } from "ethers";
import type { ChainClient } from "../chain/chain-client";
import { collectionCalls } from "../chain/collection-abi";
import { editionsCalls } from "../chain/editions-abi";
import { ApiError } from "../http/errors";
import type { JobEntry, JobKind } from "./rows";

/**
 * What a batch costs, measured once per collection and kind: `base` + `perRow` for each
 * recipient + `perToken` for each token past the first of a recipient (airdrop).
 */
export interface GasModel {
  base: bigint;
  perRow: bigint;
  perToken: bigint;
  /** Whether it was measured on the chain (false: the conservative defaults, the collection refused the probe). */
  measured: boolean;
}

/** A batch of the plan: rows [first, first + count) of the entries, its estimated gas. */
export interface PlannedBatch {
  index: number;
  first: number;
  count: number;
  gas: bigint;
}

export interface Plan {
  batches: PlannedBatch[];
  estimatedGas: bigint;
  estimatedCostWei: bigint;
  maxGasPerTx: bigint;
}

/** What the engine adds over an estimate for the gas limit it signs (chain-client.ts): batches are cut so that limit fits. */
const ENGINE_MARGIN_PERCENT = 120n;
/** Recipients in the wide probe. */
const PROBE_ROWS = 20;
/** Tokens to one recipient in the deep probe. */
const PROBE_TOKENS = 11;
/** Used when the collection refuses the probes (max supply nearly reached): above what ERC721A costs. */
const FALLBACK: GasModel = { base: 60_000n, perRow: 60_000n, perToken: 3_000n, measured: false };
/** The same for an edition contract: an ERC-1155 balance costs the same whatever its amount. */
const EDITIONS_FALLBACK: GasModel = { ...FALLBACK, perToken: 0n };

/** Fresh addresses for the probes: minting to an address that holds nothing is the dearest case. */
const probeAddresses = (n: number) => Array.from({ length: n }, () => getAddress(hexlify(randomBytes(20))));

/**
 * The call data of a batch: an edition's airdrop (its entries carry their edition, one for the
 * whole batch) is NFTEditions.airdrop(id, recipients, amounts); the whitelist functions of the two
 * contracts are the same (same selectors).
 */
export function batchCallData(kind: JobKind, entries: JobEntry[]): string {
  const addresses = entries.map((e) => getAddress(e.address));
  if (kind === "whitelist") return collectionCalls().encodeFunctionData("addToWhitelist", [addresses]);
  const amounts = entries.map((e) => e.amount);
  const tokenId = entries[0]?.tokenId;
  return tokenId === undefined
    ? collectionCalls().encodeFunctionData("airdrop", [addresses, amounts])
    : editionsCalls().encodeFunctionData("airdrop", [tokenId, addresses, amounts]);
}

/** Cuts lists into batches under MAX_GAS_PER_TX and prices them. */
export class JobPlanner {
  private readonly models = new Map<string, Promise<GasModel>>();

  constructor(
    private readonly chain: ChainClient,
    /** MAX_GAS_PER_TX; unset = a third of the latest block's gas limit. */
    private readonly maxGasPerTx?: bigint,
  ) {}

  /** Batches in the entries' order; one batch never holds two editions (entries come grouped by edition). */
  async plan(kind: JobKind, contractAddress: string, entries: JobEntry[]): Promise<Plan> {
    const [model, maxGasPerTx, fees] = await Promise.all([
      this.model(kind, contractAddress, entries[0]?.tokenId),
      this.limit(),
      this.chain.fees.quote(),
    ]);
    const batches: PlannedBatch[] = [];
    const budget = (maxGasPerTx * 100n) / ENGINE_MARGIN_PERCENT;
    let current: PlannedBatch | undefined;
    for (let i = 0; i < entries.length; i++) {
      const extra = model.perRow + model.perToken * (entries[i].amount - 1n);
      const newEdition = i > 0 && entries[i].tokenId !== entries[i - 1].tokenId;
      if (!current || newEdition || current.gas + extra > budget) {
        if (model.base + extra > budget)
          throw new ApiError("VALIDATION_ERROR", `row ${entries[i].line} alone would pass MAX_GAS_PER_TX`, [
            {
              path: `row ${entries[i].line}`,
              message: `its amount needs more than ${maxGasPerTx} gas in one transaction`,
            },
          ]);
        current = { index: batches.length, first: i, count: 0, gas: model.base };
        batches.push(current);
      }
      current.count++;
      current.gas += extra;
    }
    const estimatedGas = batches.reduce((sum, b) => sum + b.gas, 0n);
    const price = fees.type === 2 ? fees.maxFeePerGas : fees.gasPrice;
    return { batches, estimatedGas, estimatedCostWei: estimatedGas * price, maxGasPerTx };
  }

  private async limit(): Promise<bigint> {
    if (this.maxGasPerTx !== undefined) return this.maxGasPerTx;
    const block = await this.chain.provider.getBlock("latest");
    return (block?.gasLimit ?? 30_000_000n) / 3n;
  }

  /**
   * The batch cost of a collection and kind, measured once (concurrent plans share the measure); on
   * an edition contract with edition `tokenId` (each of its editions costs the same per recipient).
   */
  model(kind: JobKind, contractAddress: string, tokenId?: bigint): Promise<GasModel> {
    const key = `${kind}:${contractAddress.toLowerCase()}`;
    let model = this.models.get(key);
    if (!model) {
      model = this.measure(kind, contractAddress, tokenId);
      this.models.set(key, model);
      // A failed measure (chain down) is not kept; a refused probe gives the fallback and is kept.
      model.then(
        (m) => (m.measured ? undefined : this.models.delete(key)),
        () => this.models.delete(key),
      );
    }
    return model;
  }

  /** eth_estimateGas of three small batches, as the collection's owner (the job's wallet may not be it yet). */
  private async measure(kind: JobKind, contractAddress: string, tokenId?: bigint): Promise<GasModel> {
    const editions = (await this.chain.standardOf(contractAddress)) === "erc1155";
    const owner = await this.chain.view(contractAddress, "owner", []);
    // An ERC-1155 balance costs the same whatever its amount: no deep probe.
    const deepProbe = kind === "airdrop" && !editions;
    const estimate = (entries: JobEntry[]) =>
      this.chain.rpc
        .call<string>("eth_estimateGas", [
          { from: owner, to: contractAddress, data: batchCallData(kind, entries) },
          "latest",
        ])
        .then(BigInt);
    const probeId = editions && kind === "airdrop" ? { tokenId: tokenId ?? 1n } : {};
    const entries = (n: number, amount: bigint) =>
      probeAddresses(n).map((address, i) => ({ line: i + 1, address: address.toLowerCase(), amount, ...probeId }));
    try {
      const [one, wide, deep] = await Promise.all([
        estimate(entries(1, 1n)),
        estimate(entries(PROBE_ROWS, 1n)),
        deepProbe ? estimate(entries(1, BigInt(PROBE_TOKENS))) : Promise.resolve(0n),
      ]);
      const perRow = (wide - one) / BigInt(PROBE_ROWS - 1) + 1n;
      const perToken = deepProbe ? (deep - one) / BigInt(PROBE_TOKENS - 1) + 1n : 0n;
      return { base: one - perRow, perRow, perToken, measured: true };
    } catch {
      return editions ? EDITIONS_FALLBACK : FALLBACK;
    }
  }
}
