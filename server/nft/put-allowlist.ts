import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { requireErc721 } from "../chain/standard-guard";
import type { AllowlistEntry, AllowlistTree } from "../drops/allowlist-tree";
import { allowlistTrees } from "../drops/allowlist-tree-thread";
import { settingResponseSchema } from "../engine";
import { parseBody } from "../http/validation";
import { checkEntries } from "../drops/allowlist-entries";
import { common, nftBody, uint } from "./fields";
import { OWNER_SETTING_ERRORS, checkOwner, planSetting, settingResult } from "./owner-setting";
import { defineWrite } from "./route";

/** The most entries one allowlist takes (API.md). */
export const MAX_ALLOWLIST_ENTRIES = 100_000;

/** An entry as documented; a request's entries are checked by `checkEntries` (one loop, the same 400s), in `plan`. */
const Entry = z
  .object({
    address: z.string().regex(/^0x[0-9a-fA-F]{40}$/, "address must be a 20-byte hex address (0x…)"),
    allowance: uint("allowance"),
    price: uint("price"),
  })
  .strict();

const requestBody = <Entries extends z.ZodType>(entries: Entries) =>
  nftBody({ ...common, entries: z.array(entries).min(1).max(MAX_ALLOWLIST_ENTRIES) });
/** The body without a schema per entry: `plan` checks the entries once the caller is known to own the collection. */
const shallowBody = requestBody(z.unknown());

/** The tree each request built in `plan`, kept for `answered` to store (built once per request; a replay builds it if it must). */
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
  body: requestBody(Entry).openapi("PutAllowlistRequest"),
  // Only the envelope here (the key, the collection, how many entries): the router checks the
  // access key's scope and collections, and `plan` the owner, before any entry is looked at.
  parse: (body) => parseBody(shallowBody, body) as z.output<ReturnType<typeof requestBody<typeof Entry>>>,
  response: settingResponseSchema({ root: z.string(), entries: z.number().int() }).openapi("PutAllowlistResponse"),
  errors: [...OWNER_SETTING_ERRORS, "SERVICE_BUSY"],
  // Any key may call in open mode: the owner first, so another's 100,000 entries cost one view call,
  // and are neither checked, fingerprinted nor hashed.
  async precheck(input, { chain, signer }) {
    await requireErc721(chain, input.contractAddress, "Allowlists are");
    await checkOwner(chain, input.contractAddress, signer);
  },
  async plan(input, { chain, signer }) {
    const entries = checkEntries(input.entries as unknown[]);
    const tree = await allowlistTrees.build(entries);
    built.set(input, { entries, tree });
    return planSetting(chain, signer, {
      contractAddress: input.contractAddress,
      isCurrent: async () => (await chain.view(input.contractAddress, "allowlistRoot", [])) === tree.root,
      data: collectionCalls().encodeFunctionData("setAllowlist", [tree.root]),
      fields: { root: tree.root, entries: entries.length },
    });
  },
  result: settingResult,
  // Kept as pending, linked to its operation: the list becomes the one proofs are served from when
  // the follower confirms that operation (allowlist-store.ts), not at this answer, even a 200.
  async answered(answer, input, { chain, drops }) {
    if (!drops) return;
    const { operationId, changed } = JSON.parse(answer.body) as { operationId?: string; changed?: boolean };
    if (!operationId) return;
    // A replay runs no plan: its list is kept already, unless the first request ended before it was.
    if (answer.replayed && (await drops.allowlists.hasOperation(operationId))) return;
    let request = built.get(input);
    if (!request) {
      const entries = checkEntries(input.entries as unknown[]);
      request = { entries, tree: await allowlistTrees.build(entries) };
    }
    // No transaction (its root was on chain already): in force from the head on.
    const seenBlock =
      changed === false ? Number(BigInt(await chain.rpc.call<string>("eth_blockNumber", []))) : undefined;
    await drops.allowlists.save(input.contractAddress, request.entries, request.tree, { operationId, seenBlock });
  },
});
