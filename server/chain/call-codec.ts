import { AbiCoder, concat, getAddress, type FunctionFragment } from "ethers";

/**
 * The calldata and the return value of one function, in the ABI's words. ethers' AbiCoder builds
 * a coder tree and a Result for every call, and hashes the selector again each time (100-300 µs
 * for tokenURI, about a third of what the API spent on a read); the shapes the collection's
 * functions have (static arguments; one uint256, bool, address, string or uint256[] back) are
 * read and written word by word here.
 * Anything else, and any answer not in the canonical layout, goes through AbiCoder, so that
 * odd data fails exactly as it did (BAD_DATA and the like).
 */
export interface CallCodec {
  encode(args: readonly unknown[]): string;
  decode(data: string): unknown;
}

const ABI = AbiCoder.defaultAbiCoder();
const UINT256_LIMIT = 2n ** 256n;
const WORD = 64; // hex characters
const utf8 = new TextDecoder("utf-8", { fatal: true });

export function callCodec(fragment: FunctionFragment): CallCodec {
  // A fragment's selector is a keccak hash recomputed on every read: once here.
  const selector = fragment.selector;
  const slow: CallCodec = {
    encode: (args) => concat([selector, ABI.encode(fragment.inputs, args)]),
    // One output: that value; several (a struct-like answer): the whole Result, by index and name.
    decode: (data) => {
      const result = ABI.decode(fragment.outputs, data);
      return fragment.outputs.length === 1 ? result[0] : result;
    },
  };
  const words = fragment.inputs.map((input) => wordEncoder(input.type));
  const read = fragment.outputs.length === 1 ? wordDecoder(fragment.outputs[0].type) : undefined;
  return {
    encode(args) {
      if (args.length !== words.length) return slow.encode(args);
      let out = selector;
      for (let i = 0; i < words.length; i++) {
        const word = words[i]?.(args[i]);
        if (word === undefined) return slow.encode(args);
        out += word;
      }
      return out;
    },
    decode(data) {
      const value = read && /^0x[0-9a-fA-F]*$/.test(data) ? read(data.slice(2)) : undefined;
      return value === undefined ? slow.decode(data) : value;
    },
  };
}

/** One static argument as its 64 hex characters, or undefined when this type or value is not handled here. */
function wordEncoder(type: string): ((value: unknown) => string | undefined) | undefined {
  switch (type) {
    case "uint256":
      return (value) => {
        if (typeof value !== "bigint" && !Number.isSafeInteger(value)) return undefined;
        const n = BigInt(value as bigint | number);
        return n >= 0n && n < UINT256_LIMIT ? n.toString(16).padStart(WORD, "0") : undefined;
      };
    case "address":
      return (value) => {
        if (typeof value !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(value)) return undefined;
        try {
          getAddress(value); // a mixed-case address must carry a valid checksum, as AbiCoder requires
        } catch {
          return undefined;
        }
        return value.slice(2).toLowerCase().padStart(WORD, "0");
      };
    case "bool":
      return (value) => (typeof value === "boolean" ? (value ? "1" : "0").padStart(WORD, "0") : undefined);
    default:
      return undefined;
  }
}

/** The one return value from the answer's hex (no 0x), or undefined when it is not in canonical form. */
function wordDecoder(type: string): ((hex: string) => unknown) | undefined {
  const word = (hex: string, i: number) => hex.slice(i * WORD, (i + 1) * WORD);
  const small = (hex: string, i: number) => {
    // An offset or a length: canonical ones are far below 2^53.
    const w = word(hex, i);
    return w.length === WORD && /^0{48}/.test(w) ? parseInt(w.slice(48), 16) : undefined;
  };
  switch (type) {
    case "uint256":
      return (hex) => (hex.length >= WORD ? BigInt(`0x${word(hex, 0)}`) : undefined);
    case "bool":
      return (hex) => {
        const w = word(hex, 0);
        return /^0{63}[01]$/.test(w) ? w.endsWith("1") : undefined;
      };
    case "address":
      return (hex) => {
        const w = word(hex, 0);
        return w.length === WORD && /^0{24}/.test(w) ? getAddress(`0x${w.slice(24)}`) : undefined;
      };
    case "string":
      return (hex) => {
        const length = small(hex, 1);
        if (small(hex, 0) !== 32 || length === undefined || hex.length < 2 * WORD + 2 * length) return undefined;
        try {
          return utf8.decode(Buffer.from(hex.slice(2 * WORD, 2 * WORD + 2 * length), "hex"));
        } catch {
          return undefined; // not UTF-8: AbiCoder refuses it as before
        }
      };
    case "uint256[]":
      return (hex) => {
        const length = small(hex, 1);
        if (small(hex, 0) !== 32 || length === undefined || hex.length < (2 + length) * WORD) return undefined;
        return Array.from({ length }, (_, i) => BigInt(`0x${word(hex, 2 + i)}`));
      };
    default:
      return undefined;
  }
}
