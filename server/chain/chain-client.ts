import { getAddress, makeError, Interface, isError, toQuantity, zeroPadValue, type JsonRpcApiProvider } from "ethers";
import { ApiError, type ErrorCode } from "../http/errors";
import { collectionInterface } from "./collection";
import type { CollectionView, ViewArgs, ViewResult } from "./collection-abi";
import { editionsInterface } from "./editions";
import type { EditionView, EditionViewArgs, EditionViewResult } from "./editions-abi";
import { toChainApiError } from "./chain-errors";
import { ChainLiveness } from "./chain-liveness";
import { FeeOracle } from "./fee-oracle";
import { Rpc } from "./rpc";
import { SettledViews } from "./settled-views";
import { SignerPool } from "./signer-pool";
import type { CallCodec } from "./call-codec";
import { codecsOf } from "./typed-abi";

/** What a collection address holds: an ERC-721 collection, or ERC-1155 editions. */
export type Standard = "erc721" | "erc1155";

export interface ChainOptions {
  chainId: bigint;
  /** Ceiling on fee quotes (MAX_FEE_PER_GAS). */
  maxFeePerGas?: bigint;
  /** How to give `address` a balance of at least `wei` on this chain, where the service knows (the embedded chain). */
  fundingHint?: (address: string, wei: bigint) => string;
}

/** Headroom over the estimate: a gas estimate can be just below what execution needs at its peak. */
const GAS_MARGIN_PERCENT = 20n;
const ERC721_INTERFACE_ID = "0x80ac58cd";
const ERC1155_INTERFACE_ID = "0xd9b67a26";
const ERC165_INTERFACE_ID = "0x01ffc9a7";
const INVALID_INTERFACE_ID = "0xffffffff";
const TRUE_WORD = zeroPadValue("0x01", 32);
const FALSE_WORD = zeroPadValue("0x", 32);
const ERC165 = new Interface(["function supportsInterface(bytes4 interfaceId) view returns (bool)"]);
const COLLECTION_CODECS = codecsOf(collectionInterface);
const EDITIONS_CODECS = codecsOf(editionsInterface);

/**
 * The events that announce a change of a view SettledViews keeps: a price (per collection, or per
 * edition) and the payment token. Found in a contract's code as the PUSH32 of their topic.
 */
export const SETTLED_TOPICS = {
  cost: collectionInterface().getEvent("CostChanged")!.topicHash,
  editionCost: editionsInterface().getEvent("CostChanged")!.topicHash,
  paymentToken: collectionInterface().getEvent("PaymentTokenChanged")!.topicHash,
  paused: collectionInterface().getEvent("PausedChanged")!.topicHash,
} as const;

/**
 * The kept views whose event tells their new value: PausedChanged(bool) is paused() after it. Learned
 * from the logs of blocks proven to hold only the engine's transactions (SettledViews.learn).
 */
const TOLD_BY_EVENT = new Map<string, { key: string; value: (data: string) => unknown }>([
  [SETTLED_TOPICS.paused, { key: "paused", value: (data) => BigInt(data) !== 0n }],
]);

/** The selectors of the setters whose events SETTLED_TOPICS lists: setCost (both standards), setPaymentToken, setPaused. */
const SETTLED_SETTERS = new Set([
  collectionInterface().getFunction("setCost")!.selector,
  editionsInterface().getFunction("setCost")!.selector,
  collectionInterface().getFunction("setPaymentToken")!.selector,
  collectionInterface().getFunction("setPaused")!.selector,
]);

/**
 * The service's way to the chain, usable without Koa: reads against a collection, and the
 * simulation of writes (sending them is the transaction engine's job, server/engine).
 */
export class ChainClient {
  readonly signers: SignerPool;
  readonly fees: FeeOracle;
  readonly rpc: Rpc;
  /** Whether the chain answers, known without waiting on it: the store's reads answer at once while it is down. */
  readonly liveness: ChainLiveness;
  /**
   * Addresses known to hold a collection, and its standard, read once by ERC-165 (a dev chain can
   * be reset: see ensureCollection).
   */
  private readonly verified = new Map<string, Standard>();
  private readonly inFlight = new Map<string, Promise<unknown>>();
  /** Per address, which of SETTLED_TOPICS its code emits (read with the code, at the first check). */
  private readonly emits = new Map<string, Set<string>>();
  /** Views kept while the heads show they cannot have changed (a collection's price). */
  readonly settledViews = new SettledViews();

  constructor(
    readonly provider: JsonRpcApiProvider,
    readonly options: ChainOptions,
  ) {
    this.signers = new SignerPool();
    this.fees = new FeeOracle(provider, options.maxFeePerGas);
    this.rpc = new Rpc(provider);
    this.liveness = new ChainLiveness(async () => Number(BigInt(await this.rpc.call<string>("eth_blockNumber", []))));
  }

  /**
   * 404 CONTRACT_NOT_FOUND without code, 422 UNSUPPORTED_CONTRACT for code that is neither an
   * ERC-721 nor an ERC-1155 (which of the two it is: standardOf).
   * An address is checked once (concurrent first requests share the check); after that only on
   * suspicion (`recheck`): a read answered with nothing, or a write that would cost no more than a
   * plain transfer, which is what a call to an address without code costs.
   */
  ensureCollection(address: string, recheck = false): Promise<void> {
    if (!recheck && this.verified.has(address)) return Promise.resolve();
    return this.once(`code:${address}`, () => this.checkCode(address));
  }

  /** Whether `address` holds an ERC-721 collection or ERC-1155 editions: read once by ERC-165, then kept. */
  standardOf(address: string): Promise<Standard> {
    // Known: answered without the check's promise chain (every edition-aware route asks first).
    const known = this.verified.get(address);
    if (known) return Promise.resolve(known);
    return this.ensureCollection(address).then(() => this.verified.get(address)!);
  }

  private async checkCode(address: string): Promise<void> {
    // On first contact the ERC-165 questions go out with the code lookup: one round trip, not two.
    const erc165 = this.verified.has(address) ? undefined : this.askStandard(address);
    erc165?.catch(() => {}); // awaited below, or moot when there is no code
    const code = await this.rpc.call<string>("eth_getCode", [address, "latest"]).catch((err) => {
      throw toChainApiError(err);
    });
    this.emits.set(address, new Set(Object.values(SETTLED_TOPICS).filter((t) => code.includes(t.slice(2)))));
    if (code === "0x") {
      this.verified.delete(address);
      throw new ApiError("CONTRACT_NOT_FOUND", `No contract at ${address}`);
    }
    if (erc165) {
      const standard = await erc165;
      if (!standard) throw unsupported(address);
      this.verified.set(address, standard);
    }
  }

  /**
   * The ERC-165 detection procedure, with exact answers: code that returns any non-zero word to
   * every call must not pass for a collection. ERC-721 first: a contract that claims both is
   * driven as the ERC-721 it was before editions existed.
   */
  private async askStandard(address: string): Promise<Standard | null> {
    const ask = (id: string) =>
      this.provider
        .call({ to: address, data: ERC165.encodeFunctionData("supportsInterface", [id]) })
        .catch((err: unknown) => {
          const apiError = toChainApiError(err);
          if (apiError.code === "CHAIN_UNAVAILABLE") throw apiError;
          return "error";
        });
    const [erc165, invalid, erc721, erc1155] = await Promise.all([
      ask(ERC165_INTERFACE_ID),
      ask(INVALID_INTERFACE_ID),
      ask(ERC721_INTERFACE_ID),
      ask(ERC1155_INTERFACE_ID),
    ]);
    if (erc165 !== TRUE_WORD || invalid !== FALSE_WORD) return null;
    if (erc721 === TRUE_WORD) return "erc721";
    return erc1155 === TRUE_WORD ? "erc1155" : null;
  }

  /**
   * One view call of the collection ABI, straight over JSON-RPC: the read path skips the Contract
   * wrapper's argument resolution and transaction population, which cost more than the call.
   */
  view<K extends CollectionView>(address: string, method: K, args: ViewArgs<K>): Promise<ViewResult<K>> {
    return this.callView(COLLECTION_CODECS(method), address, args) as Promise<ViewResult<K>>;
  }

  /**
   * `read()`, or its answer kept since a block, while no header since may hold `topic` from
   * `address` (SettledViews). Read every time for a contract whose code does not emit that event.
   */
  settled<T>(address: string, key: string, topic: string, read: () => Promise<T>): Promise<T> {
    if (!this.emits.get(address)?.has(topic)) return read();
    return this.settledViews.get(`${address.toLowerCase()}:${key}`, address, topic, read);
  }

  /**
   * A write of this service confirmed: a setter of a kept view (setCost, setPaymentToken) makes
   * the collection's kept views be read again. Its receipt may come before the feed sees its
   * block (an automining node), when no header would tell yet.
   */
  confirmedWrite(to: string | null, data: string, minedAt?: number): void {
    if (to && SETTLED_SETTERS.has(data.slice(0, 10))) this.settledViews.forget(to, minedAt);
  }

  /**
   * Every log of a block proven to hold only the engine's transactions (OwnBlocks): the events
   * that tell a kept view's new value (TOLD_BY_EVENT) are kept as its value from that block on,
   * for a contract whose code emits them (as `settled` reads them).
   */
  learnSettled(
    block: { number: number; hash: string },
    logs: Array<{ address: string; topics: string[]; data: string }>,
  ): void {
    for (const log of logs) {
      const topic = log.topics[0]?.toLowerCase();
      const told = topic === undefined ? undefined : TOLD_BY_EVENT.get(topic);
      if (!told || !this.emits.get(getAddress(log.address))?.has(topic!)) continue;
      this.settledViews.learn(`${log.address.toLowerCase()}:${told.key}`, told.value(log.data), block);
    }
  }

  /** One view call of the ERC-1155 editions ABI (NFTEditions), as `view` is one of the ERC-721's. */
  viewEdition<K extends EditionView>(
    address: string,
    method: K,
    args: EditionViewArgs<K>,
  ): Promise<EditionViewResult<K>> {
    return this.callView(EDITIONS_CODECS(method), address, args) as Promise<EditionViewResult<K>>;
  }

  private async callView(codec: CallCodec, address: string, args: readonly unknown[]): Promise<unknown> {
    const result = await this.ethCall(address, codec.encode(args));
    if (result === "0x") throw makeError("could not decode result data", "BAD_DATA", { value: result });
    return codec.decode(result);
  }

  /**
   * eth_call through the provider's transport directly: `send` would queue each call behind a
   * drain timer meant for batching, which is off here.
   */
  private ethCall(to: string, data: string): Promise<string> {
    return this.once(`call:${to}:${data}`, () => this.rpc.call<string>("eth_call", [{ to, data }, "latest"]));
  }

  /**
   * Identical calls already on their way share one answer: 200 concurrent mints ask the price and
   * the gas of the same call once. Nothing is kept once the answer is in.
   */
  private once<T>(key: string, call: () => Promise<T>): Promise<T> {
    let pending = this.inFlight.get(key) as Promise<T> | undefined;
    if (!pending) {
      pending = call().finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  /**
   * Runs reads against a verified collection and maps their failures to API errors. On first
   * contact the reads go out with the check (one round trip less); their outcome counts only once
   * the check has passed, so an address that is no collection still answers the check's error.
   */
  async read<T>(address: string, reads: () => Promise<T>): Promise<T> {
    const checked = this.ensureCollection(address);
    const outcome = reads().then(
      (value) => ({ value }),
      (err: unknown) => ({ err }),
    );
    await checked;
    const answered = await outcome;
    if ("err" in answered) throw await this.explain(address, answered.err, "UNSUPPORTED_CONTRACT");
    return answered.value;
  }

  /**
   * Simulates a write with eth_estimateGas: a call that would revert costs nothing and becomes its
   * API error (403, 409, 422, …). Answers the gas limit to send with, the estimate plus a margin.
   */
  async simulate(call: { from: string; to?: string; data: string; value?: bigint }): Promise<bigint> {
    const { from, to, data, value = 0n } = call;
    if (to) await this.ensureCollection(to);
    let estimate: bigint;
    try {
      // Against "latest": a node estimating against "pending" re-runs its whole mempool first.
      const request = { from, ...(to ? { to } : {}), data, value: toQuantity(value) };
      const key = `estimate:${from}:${to ?? ""}:${request.value}:${data}`;
      estimate = BigInt(await this.once(key, () => this.rpc.call<string>("eth_estimateGas", [request, "latest"])));
    } catch (err) {
      const apiError = to ? await this.explain(to, err, "CONTRACT_REVERTED") : toChainApiError(err);
      if (apiError.code === "INSUFFICIENT_FUNDS") throw await this.insufficientFunds(from, { value });
      if (apiError.code === "NOT_CONTRACT_OWNER" && to) throw await this.notContractOwner(to, from);
      throw apiError;
    }
    // About what a call to no code costs (estimates can be a unit or so above): is there code left there?
    if (to && estimate <= intrinsicGas(data) + 1_000n) await this.ensureCollection(to, true);
    return estimate + (estimate * GAS_MARGIN_PERCENT) / 100n;
  }

  /**
   * 402 INSUFFICIENT_FUNDS naming `address`, what it holds and what the write needs: `spend` (value
   * plus gas at the signed max fee) once known, else at least its `value`; and how to fund it on the
   * embedded chain.
   */
  async insufficientFunds(address: string, need: { spend?: bigint; value?: bigint }): Promise<ApiError> {
    const balance = await this.rpc.call<string>("eth_getBalance", [address, "latest"]).then(BigInt, () => null);
    const needs =
      need.spend !== undefined
        ? `needs ${need.spend} wei (its value plus gas at the signed max fee)`
        : `needs more than ${need.value ?? 0n} wei (its value, plus gas)`;
    const total = need.spend ?? need.value ?? 0n;
    const short = balance === null ? total : total - balance;
    const send = short > 0n ? `send ${address} at least ${short} wei more` : `fund ${address}`;
    const hint = this.options.fundingHint?.(address, total);
    return new ApiError(
      "INSUFFICIENT_FUNDS",
      `${address} ${balance === null ? "cannot pay this write, which" : `holds ${balance} wei; this write`} ${needs}: ` +
        `${send}, then retry${hint ? `. ${hint}` : ""}`,
    );
  }

  /** 403 NOT_CONTRACT_OWNER in the API's words: who owns the collection, and who asked. */
  async notContractOwner(collection: string, caller: string): Promise<ApiError> {
    const owner = await this.view(collection, "owner", []).then(String, () => null);
    return new ApiError(
      "NOT_CONTRACT_OWNER",
      `Only the owner of collection ${collection}${owner ? `, ${owner},` : ""} may do this; the caller is ${caller}`,
    );
  }

  /** How many transactions `address` has sent, as of "latest" (mined) or "pending" (in the node's pool too). */
  async transactionCount(address: string, tag: "latest" | "pending"): Promise<number> {
    const count = await this.rpc.call<string>("eth_getTransactionCount", [address, tag]).catch((err: unknown) => {
      throw toChainApiError(err);
    });
    return Number(BigInt(count));
  }

  async ping(): Promise<number> {
    try {
      return await this.liveness.watch(this.provider.getBlockNumber());
    } catch (err) {
      throw toChainApiError(err);
    }
  }

  /** Maps a failed call; an empty answer re-checks the address, which may have lost its code (a reset chain). */
  private async explain(address: string, err: unknown, emptyRevert: ErrorCode): Promise<ApiError> {
    const apiError = toChainApiError(err, emptyRevert);
    if (apiError.code === "UNSUPPORTED_CONTRACT" || isError(err, "BAD_DATA")) {
      try {
        await this.ensureCollection(address, true);
      } catch (recheck) {
        return toChainApiError(recheck);
      }
    }
    return apiError;
  }
}

/** What a transaction costs before any code runs (EIP-2028 calldata pricing): all a call to no code costs. */
function intrinsicGas(data: string): bigint {
  let gas = 21_000n;
  for (let i = 2; i < data.length; i += 2) gas += data.slice(i, i + 2) === "00" ? 4n : 16n;
  return gas;
}

function unsupported(address: string): ApiError {
  return new ApiError(
    "UNSUPPORTED_CONTRACT",
    `The code at ${address} is neither an ERC-721 collection nor ERC-1155 editions this service can drive`,
  );
}
