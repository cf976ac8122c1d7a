import { expect } from "chai";
import { AbiCoder, concat, isError } from "ethers";
import { collectionInterface } from "../../server/chain/collection";
import { callCodec } from "../../server/chain/call-codec";
import { collectionCalls } from "../../server/chain/collection-abi";

const ABI = AbiCoder.defaultAbiCoder();
const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/** What AbiCoder answers for `data` (a Result's values as a plain array), or the code it throws. */
function abiDecode(name: string, data: string): unknown {
  const fragment = collectionInterface().getFunction(name)!;
  try {
    const value: unknown = ABI.decode(fragment.outputs, data)[0];
    return Array.isArray(value) ? [...(value as unknown[])] : value;
  } catch (err) {
    return { threw: isError(err, "BAD_DATA") ? "BAD_DATA" : String((err as { code?: string }).code) };
  }
}

function fastDecode(name: string, data: string): unknown {
  try {
    return callCodec(collectionInterface().getFunction(name)!).decode(data);
  } catch (err) {
    return { threw: isError(err, "BAD_DATA") ? "BAD_DATA" : String((err as { code?: string }).code) };
  }
}

describe("call codec: the collection's calls, word by word, as AbiCoder would", function () {
  const cases: Array<[string, unknown[], unknown[]]> = [
    ["tokenURI", [1n], ["ipfs://cid/1.json"]],
    ["tokenURI", [2n ** 256n - 1n], [`héllo 🌍 ${"x".repeat(100)}`]],
    ["tokenURI", [0n], [""]],
    ["cost", [], [10n ** 16n]],
    ["totalSupply", [], [2n ** 256n - 1n]],
    ["owner", [], [ALICE]],
    ["paused", [], [true]],
    ["whitelisted", [ALICE.toLowerCase()], [false]],
    ["walletOfOwner", [ALICE], [[1n, 5n, 2n ** 200n]]],
    ["walletOfOwner", [ALICE], [[]]],
    ["isApprovedForAll", [ALICE, ALICE], [true]],
    ["explicitOwnershipOf", [3n], [[ALICE, 5n, false, 7n]]], // a tuple: AbiCoder's way
  ];
  for (const [name, args, outputs] of cases) {
    it(`${name}(${args.length ? "…" : ""}) encodes and decodes exactly as AbiCoder`, function () {
      const fragment = collectionInterface().getFunction(name)!;
      expect(callCodec(fragment).encode(args)).to.equal(concat([fragment.selector, ABI.encode(fragment.inputs, args)]));
      const data = ABI.encode(fragment.outputs, outputs);
      expect(fastDecode(name, data)).to.deep.equal(abiDecode(name, data));
    });
  }

  it("every write's calldata is AbiCoder's (collectionCalls); a bad checksum or a fraction fails as with ethers", function () {
    const iface = collectionInterface();
    const writes: Array<[string, unknown[]]> = [
      ["mint", [3n]],
      ["mint", [2]],
      ["mintForFree", [5n, ALICE]],
      ["setPaused", [true]],
      ["addUserAddressToWhitelist", [ALICE.toLowerCase()]],
      ["setCost", [2n ** 256n - 1n]],
      ["withdraw", []],
    ];
    for (const [name, args] of writes) {
      const encode = collectionCalls().encodeFunctionData as (name: string, args?: unknown[]) => string;
      expect(encode(name, args), name).to.equal(iface.encodeFunctionData(name, args));
    }
    const codec = callCodec(iface.getFunction("mintForFree")!);
    const badChecksum = ALICE.replace("C8", "c8");
    expect(() => codec.encode([1n, badChecksum])).to.throw();
    expect(() => callCodec(iface.getFunction("mint")!).encode([1.5])).to.throw();
  });

  it("answers that are not in the canonical layout fail (or pass) exactly as with AbiCoder", function () {
    const word = (n: number | string) => (typeof n === "number" ? n.toString(16) : n).padStart(64, "0");
    const strings = [
      "0x01", // too short
      `0x${word(42)}`, // an offset pointing nowhere
      `0x${word(32)}${word(255)}`, // a length past the end
      `0x${word(32)}${word(2)}${"ff".repeat(32)}`, // not UTF-8
      `0x${word(64)}${word(0)}${word(3)}${"61".repeat(3).padEnd(64, "0")}`, // a non-canonical offset
    ];
    for (const data of strings) expect(fastDecode("tokenURI", data), data).to.deep.equal(abiDecode("tokenURI", data));
    for (const data of [`0x${"ff".repeat(32)}`, `0x${"00".repeat(12)}${"ab".repeat(20)}`, "0x1234"])
      expect(fastDecode("owner", data), data).to.deep.equal(abiDecode("owner", data));
    for (const data of [`0x${word(2)}`, `0x${word(1)}`, "0x"])
      expect(fastDecode("paused", data), data).to.deep.equal(abiDecode("paused", data));
  });
});
