import { Interface, toQuantity } from "ethers";
import type { Rpc } from "../chain/rpc";

const METADATA = new Interface(["function name() view returns (string)", "function symbol() view returns (string)"]);

/**
 * The first block where `address` has code, found by bisection over eth_getCode (about log2(head)
 * calls, once per collection). A node that cannot answer for old blocks (pruned state) gets an
 * earlier start, never a later one: starting early only costs empty log ranges.
 */
export async function deploymentBlock(rpc: Rpc, address: string, head: number): Promise<number> {
  const hasCode = async (block: number) =>
    (await rpc.call<string>("eth_getCode", [address, toQuantity(block)])) !== "0x";
  let low = 0; // no code known at or below `low` (unchecked at first: 0 is where any chain starts)
  let high = head;
  try {
    if (!(await hasCode(high))) return head; // not deployed yet: its logs start with the next blocks
    if (await hasCode(0)) return 0;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (await hasCode(middle)) high = middle;
      else low = middle;
    }
    return high;
  } catch {
    return low;
  }
}

/** The collection's name and symbol (IERC721Metadata), or null for what it does not answer. */
export async function collectionMetadata(
  rpc: Rpc,
  address: string,
): Promise<{ name: string | null; symbol: string | null }> {
  const [name, symbol] = await rpc.batch(
    (["name", "symbol"] as const).map((fn) => [
      "eth_call",
      [{ to: address, data: METADATA.encodeFunctionData(fn, []) }, "latest"],
    ]),
  );
  const decode = (fn: "name" | "symbol", answer: typeof name) => {
    if (!("result" in answer) || typeof answer.result !== "string" || answer.result === "0x") return null;
    try {
      // PostgreSQL text holds no NUL; a name longer than a line is not a name.
      return (METADATA.decodeFunctionResult(fn, answer.result)[0] as string).replace(/\0/g, "").slice(0, 200);
    } catch {
      return null;
    }
  };
  return { name: decode("name", name), symbol: decode("symbol", symbol) };
}
