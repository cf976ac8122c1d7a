import { getAddress } from "ethers";
import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import type { AllowlistEntry, AllowlistTree } from "../drops/allowlist-tree";
import { buildAllowlistTreeOffThread } from "../drops/allowlist-tree-thread";
import { settingResponseSchema } from "../engine";
import { ApiError } from "../http/errors";
import { common, nftBody, uint } from "./fields";
import { OWNER_SETTING_ERRORS, planSetting, settingResult } from "./owner-setting";
import { defineWrite } from "./route";

/** The most entries one allowlist takes (API.md). */
export const MAX_ALLOWLIST_ENTRIES = 100_000;

/**
 * An entry's address: as `address()` takes it, with the EIP-55 checksum computed only for a
 * mixed-case one (a keccak per address was most of the time of parsing 100,000 entries).
 */
const entryAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "address must be a 20-byte hex address (0x…)")
  .refine((v) => {
    const hex = v.slice(2);
    return hex === hex.toLowerCase() || hex === hex.toUpperCase() || getAddress(v) === v;
  }, "address must be checksummed (EIP-55) if mixed-case")
  .transform((v) => `0x${v.slice(2).toLowerCase()}`);

const Entry = z.object({ address: entryAddress, allowance: uint("allowance"), price: uint("price") }).strict();

/** The tree each request built in `plan`, kept for `answered` to store (built once per request). */
const built = new WeakMap<object, { entries: AllowlistEntry[]; tree: AllowlistTree }>();

export const putAllowlistRoute = defineWrite({
  path: "/collections/{address}/allowlist",
  method: "put",
  pathFields: { contractAddress: "address" },
  bodyLimit: "12mb",
  operation: "setAllowlist",
  access: { scope: "nft:configure", key: "open", bodyCollection: "contractAddress" },
  summary: "Set a collection's allowlist: the service builds and keeps its Merkle tree, and sets its root on chain",
  description:
    'Up to 100,000 entries. Leaves are [address, allowance, price] hashed as @openzeppelin/merkle-tree\'s StandardMerkleTree hashes them with types ["address","uint256","uint256"]. One transaction (setAllowlist) whatever the size; none when the root is already set (changed:false).',
  body: nftBody({
    ...common,
    entries: z.array(Entry).min(1).max(MAX_ALLOWLIST_ENTRIES),
  })
    .strict()
    .openapi("PutAllowlistRequest"),
  response: settingResponseSchema({ root: z.string(), entries: z.number().int() }).openapi("PutAllowlistResponse"),
  errors: OWNER_SETTING_ERRORS,
  async plan(input, { chain, signer }) {
    const seen = new Map<string, number>();
    input.entries.forEach((entry, row) => {
      const first = seen.get(entry.address);
      if (first !== undefined)
        throw new ApiError("VALIDATION_ERROR", `${entry.address} is listed twice (entries ${first} and ${row})`, [
          { path: `entries.${row}.address`, message: `the same address as entries.${first}` },
        ]);
      seen.set(entry.address, row);
    });
    const tree = await buildAllowlistTreeOffThread(input.entries);
    built.set(input, { entries: input.entries, tree });
    return planSetting(chain, signer, {
      contractAddress: input.contractAddress,
      isCurrent: async () => (await chain.view(input.contractAddress, "allowlistRoot", [])) === tree.root,
      data: collectionCalls().encodeFunctionData("setAllowlist", [tree.root]),
      fields: { root: tree.root, entries: input.entries.length },
    });
  },
  result: settingResult,
  async answered(answer, input, { drops }) {
    const request = built.get(input);
    if (!request || !drops) return;
    const { operationId } = JSON.parse(answer.body) as { operationId?: string };
    await drops.allowlists.save(input.contractAddress, request.entries, request.tree, operationId ?? null);
  },
});
