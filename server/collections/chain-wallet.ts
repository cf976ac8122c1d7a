import { Interface, isError } from "ethers";
import { isOutOfGas, toChainApiError } from "../chain/chain-errors";
import type { Rpc, RpcAnswer } from "../chain/rpc";
import { ApiError } from "../http/errors";

const ERC721 = new Interface([
  "function balanceOf(address owner) view returns (uint256)",
  "function ownerOf(uint256 tokenId) view returns (address)",
  "function totalSupply() view returns (uint256)",
  "function tokensOfOwnerIn(address owner, uint256 start, uint256 stop) view returns (uint256[])",
  "function tokenOfOwnerByIndex(address owner, uint256 index) view returns (uint256)",
  "function supportsInterface(bytes4 interfaceId) view returns (bool)",
]);
const ERC721_ENUMERABLE_ID = "0x780e9d63";

/** Ids a tokensOfOwnerIn range covers at first: ~2,500 gas an id, well under geth's 50M cap for calls. */
const INITIAL_QUERY_SPAN = 5_000n;
/** Ranges sent in one JSON-RPC batch (the node runs them one after the other within one round trip). */
const RANGES_PER_BATCH = 2;
const CALLS_PER_BATCH = 500;

/** How a collection lets a wallet be read from the chain, learnt once per collection. */
type Strategy = "queryable" | "enumerable" | "ownerOf" | "none";

/**
 * A wallet read straight from the chain, in pieces a node accepts, for when the index has not
 * caught up: `tokensOfOwnerIn` ranges (ERC721AQueryable, the reference collection), else
 * `tokenOfOwnerByIndex` (ERC721Enumerable), else `ownerOf` over the ids up to `totalSupply`. A
 * range that runs out of gas is split, so the read never fails because the collection is large.
 * Answers null for an ERC-721 that offers none of these (only the index can tell then).
 */
export class ChainWalletReader {
  private readonly strategies = new Map<string, Strategy>();
  private readonly spans = new Map<string, bigint>();

  constructor(private readonly rpc: Rpc) {}

  async wallet(collection: string, owner: string): Promise<string[] | null> {
    try {
      return await this.read721(collection, owner);
    } catch (err) {
      throw toChainApiError(err, "CONTRACT_REVERTED"); // a transport failure is CHAIN_UNAVAILABLE, never a 500
    }
  }

  private async read721(collection: string, owner: string): Promise<string[] | null> {
    const balance = await this.read<bigint>(collection, "balanceOf", [owner]);
    if (balance === 0n) return [];
    const strategy = await this.strategyOf(collection, owner);
    switch (strategy) {
      case "queryable":
        return this.byRanges(collection, owner, balance);
      case "enumerable":
        return this.byIndex(collection, owner, balance);
      case "ownerOf":
        return this.byOwnerOf(collection, owner, balance);
      case "none":
        return null;
    }
  }

  private async strategyOf(collection: string, owner: string): Promise<Strategy> {
    const known = this.strategies.get(collection);
    if (known) return known;
    const [queryable, enumerable, supply] = await this.rpc.batch([
      this.call(collection, "tokensOfOwnerIn", [owner, 0n, 1n]),
      this.call(collection, "supportsInterface", [ERC721_ENUMERABLE_ID]),
      this.call(collection, "totalSupply", []),
    ]);
    const answers = (answer: RpcAnswer) => "result" in answer && answer.result !== "0x";
    const strategy: Strategy = answers(queryable)
      ? "queryable"
      : answers(enumerable) &&
          ERC721.decodeFunctionResult("supportsInterface", (enumerable as { result: string }).result)[0]
        ? "enumerable"
        : answers(supply)
          ? "ownerOf"
          : "none";
    this.strategies.set(collection, strategy);
    return strategy;
  }

  /** tokensOfOwnerIn over consecutive id ranges, a few per round trip, halving a range that runs out of gas. */
  private async byRanges(collection: string, owner: string, balance: bigint): Promise<string[]> {
    const supply = await this.read<bigint>(collection, "totalSupply", []);
    const ids: string[] = [];
    let start = 0n;
    let span = this.spans.get(collection) ?? INITIAL_QUERY_SPAN;
    for (;;) {
      const starts = Array.from({ length: RANGES_PER_BATCH }, (_, i) => start + BigInt(i) * span);
      let answers: RpcAnswer[];
      try {
        answers = await this.rpc.batch(
          starts.map((from) => this.call(collection, "tokensOfOwnerIn", [owner, from, from + span])),
        );
      } catch (err) {
        // Ranges so large the node does not answer within the call's time bound: smaller ones.
        if (!isError(err, "TIMEOUT") || span === 1n) throw err;
        span = span / 2n;
        this.spans.set(collection, span);
        continue;
      }
      let added = 0;
      let shrunk = false;
      for (const [i, answer] of answers.entries()) {
        if ("error" in answer) {
          if (!isOutOfGas(answer.error) || span === 1n) throw this.failure("tokensOfOwnerIn", answer);
          span = span / 2n;
          this.spans.set(collection, span);
          start = starts[i];
          shrunk = true;
          break;
        }
        const found = ERC721.decodeFunctionResult("tokensOfOwnerIn", answer.result as string)[0] as bigint[];
        for (const id of found) ids.push(id.toString());
        added += found.length;
      }
      if (shrunk) continue;
      start += BigInt(RANGES_PER_BATCH) * span;
      // Every token found, or past every id with nothing more in the last ranges (burnt ids lie above the supply).
      if (BigInt(ids.length) >= balance || (start > supply && added === 0)) return ids;
    }
  }

  /** tokenOfOwnerByIndex for each index below the balance, in batches. */
  private async byIndex(collection: string, owner: string, balance: bigint): Promise<string[]> {
    const ids: string[] = [];
    for (let first = 0n; first < balance; first += BigInt(CALLS_PER_BATCH)) {
      const count = Number(balance - first < BigInt(CALLS_PER_BATCH) ? balance - first : BigInt(CALLS_PER_BATCH));
      const answers = await this.rpc.batch(
        Array.from({ length: count }, (_, i) =>
          this.call(collection, "tokenOfOwnerByIndex", [owner, first + BigInt(i)]),
        ),
      );
      for (const answer of answers) {
        if ("error" in answer) throw this.failure("tokenOfOwnerByIndex", answer);
        ids.push((ERC721.decodeFunctionResult("tokenOfOwnerByIndex", answer.result as string)[0] as bigint).toString());
      }
    }
    return ids.sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  }

  /** ownerOf over ids from 0 until every token of `owner` is found, or past the supply with nothing more. */
  private async byOwnerOf(collection: string, owner: string, balance: bigint): Promise<string[]> {
    const supply = await this.read<bigint>(collection, "totalSupply", []);
    const wanted = owner.toLowerCase();
    const ids: string[] = [];
    for (let first = 0n; ; first += BigInt(CALLS_PER_BATCH)) {
      const answers = await this.rpc.batch(
        Array.from({ length: CALLS_PER_BATCH }, (_, i) => this.call(collection, "ownerOf", [first + BigInt(i)])),
      );
      let seen = 0;
      answers.forEach((answer, i) => {
        if (!("result" in answer) || answer.result === "0x") return; // a burnt or never minted id reverts
        seen++;
        const holder = ERC721.decodeFunctionResult("ownerOf", answer.result as string)[0] as string;
        if (holder.toLowerCase() === wanted) ids.push((first + BigInt(i)).toString());
      });
      if (BigInt(ids.length) >= balance || (first > supply && seen === 0)) return ids;
    }
  }

  private call(collection: string, fn: string, args: unknown[]): [string, unknown[]] {
    return ["eth_call", [{ to: collection, data: ERC721.encodeFunctionData(fn, args) }, "latest"]];
  }

  private async read<T>(collection: string, fn: string, args: unknown[]): Promise<T> {
    const [answer] = await this.rpc.batch([this.call(collection, fn, args)]);
    if ("error" in answer) throw this.failure(fn, answer);
    return ERC721.decodeFunctionResult(fn, answer.result as string)[0] as T;
  }

  private failure(fn: string, answer: Extract<RpcAnswer, { error: unknown }>): ApiError {
    return toChainApiError(this.rpc.errorOf("eth_call", [], answer), "CONTRACT_REVERTED");
  }
}
