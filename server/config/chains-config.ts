import { readFileSync } from "node:fs";
import { jsonErrorPosition } from "./json-position";
import { z } from "zod";
import { ConfigError } from "./config-error";

/** What the configuration says of one chain (CHAINS, or RPC_URL / the embedded chain as the one-chain form). */
export interface ChainSpec {
  /** The chain id CHAINS names; unset for RPC_URL and the embedded chain, whose id the node tells. */
  id?: bigint;
  /** Lowercase letters, digits and `-`; unset = `chain-<id>` (`local` for the embedded chain). */
  name?: string;
  /** The chain's JSON-RPC URLs, in the order they are tried; empty for the embedded chain. */
  rpcUrls: string[];
  /** Where to subscribe to new heads (`eth_subscribe` `newHeads`); unset = the first ws(s):// URL of `rpcUrls`. */
  wsUrl?: string;
  confirmations: number;
  finalityBlocks: number;
  txResendBlocks: number;
  maxFeePerGas?: bigint;
}

const ChainEntry = z
  .object({
    id: z.union([z.number().int().positive(), z.string().regex(/^\d{1,20}$/, "must be a decimal chain id")]),
    name: z
      .string()
      .regex(/^[a-z0-9-]{1,64}$/, "must be 1-64 lowercase letters, digits and -")
      .optional(),
    rpcUrls: z
      .array(z.url({ protocol: /^(https?|wss?)$/, error: "must be http(s) or ws(s) URLs" }))
      .min(1, "must list at least one URL"),
    wsUrl: z.url({ protocol: /^wss?$/, error: "must be a ws(s) URL" }).optional(),
    confirmations: z.number().int().min(1).max(64).optional(),
    finalityBlocks: z.number().int().min(1).max(10_000).optional(),
    txResendBlocks: z.number().int().min(1).max(1000).optional(),
    maxFeePerGas: z
      .union([z.string().regex(/^\d{1,78}$/, "must be a whole number of wei"), z.number().int().positive()])
      .optional(),
  })
  .strict();

/**
 * CHAINS: a JSON array, inline or `@path/to/chains.json` (API.md, "Chains"). Throws a ConfigError
 * whose message is one line naming the chain and the field.
 */
export function parseChains(
  value: string,
  defaults: Pick<ChainSpec, "confirmations" | "finalityBlocks" | "txResendBlocks" | "maxFeePerGas">,
): ChainSpec[] {
  const fail = (message: string) => new ConfigError(`Invalid configuration: CHAINS ${message}`);
  let text = value.trim();
  if (text.startsWith("@")) {
    try {
      text = readFileSync(text.slice(1), "utf8");
    } catch (err) {
      throw fail(`cannot read ${text.slice(1)}: ${(err as NodeJS.ErrnoException).code ?? "unreadable"}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw fail(notJson(value.trim(), text));
  }
  if (!Array.isArray(parsed) || parsed.length === 0) throw fail("must be a non-empty JSON array of chains");
  const specs: ChainSpec[] = parsed.map((entry, i) => {
    const label = chainLabel(entry, i);
    const result = ChainEntry.safeParse(entry);
    if (!result.success) {
      const issue = result.error.issues[0];
      const field = issue.path.filter((p) => typeof p === "string").join(".") || "(entry)";
      throw fail(`chain ${label}: ${field} ${issue.message}`);
    }
    const c = result.data;
    const id = BigInt(c.id);
    return {
      id,
      name: c.name ?? `chain-${id}`,
      rpcUrls: c.rpcUrls,
      ...(c.wsUrl ? { wsUrl: c.wsUrl } : {}),
      confirmations: c.confirmations ?? defaults.confirmations,
      finalityBlocks: c.finalityBlocks ?? defaults.finalityBlocks,
      txResendBlocks: c.txResendBlocks ?? defaults.txResendBlocks,
      maxFeePerGas: c.maxFeePerGas !== undefined ? BigInt(c.maxFeePerGas) : defaults.maxFeePerGas,
    };
  });
  const seen = new Map<string, number>();
  for (const [i, spec] of specs.entries()) {
    for (const key of [spec.id!.toString(), spec.name!]) {
      if (seen.has(key))
        throw fail(`chain ${chainLabel(parsed[i], i)}: ${key === spec.name ? "name" : "id"} ${key} is used twice`);
      seen.set(key, i);
    }
  }
  return specs;
}

/** How a line names a chain: its name, else its id, else its place in the array. */
function chainLabel(entry: unknown, index: number): string {
  const e = (typeof entry === "object" && entry !== null ? entry : {}) as { name?: unknown; id?: unknown };
  if (typeof e.name === "string" && e.name.length <= 64) return e.name;
  if (typeof e.id === "number" || typeof e.id === "string") return String(e.id).slice(0, 24);
  return `#${index + 1}`;
}

/** Why CHAINS is not JSON: where parsing failed (never the text: it may hold an RPC URL's key), or that a file wants `@`. */
function notJson(value: string, text: string): string {
  // A file's name given without its @: the likeliest slip.
  if (!value.startsWith("@") && /^[\w./~-]+\.json$/i.test(value))
    return `is not JSON: to read the file ${value}, write CHAINS=@${value}`;
  const where = jsonErrorPosition(text);
  const place = where
    ? text.includes("\n")
      ? ` at line ${where.line}, column ${where.column}`
      : ` at character ${where.column}`
    : "";
  const source = value.startsWith("@") ? ` in ${value.slice(1)}` : "";
  return `must be a JSON array (inline, or @file): not valid JSON${source}${place}`;
}
