/**
 * The metadata writes (API.md, "Metadata"), each an operation through the engine like every write
 * (Idempotency-Key, `from` or `privateKey`, scopes): the commit of the provenance, the reveal, the
 * base URI pointed at the hosted documents, and setBaseURI.
 */
import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import type { Receipt } from "../chain/receipt";
import { settingResponseSchema } from "../engine";
import { ApiError } from "../http/errors";
import { invalid } from "../http/validation";
import { common, decimal, nftBody } from "../nft/fields";
import { OWNER_SETTING_ERRORS, planSetting, settingResult } from "../nft/owner-setting";
import { defineWrite, type NftDeps } from "../nft/route";
import type { TransactionSigner } from "../signers/signer";
import { REVEALED_TOPIC } from "./events";
import { provenanceOf } from "./provenance";
import { frozen } from "./store";
import { requirePublicUrlFor } from "./public-url";

const OwnerBody = nftBody({ ...common }).strict();
const ACCESS = { scope: "nft:configure", key: "open", bodyCollection: "contractAddress" } as const;

function metadataOf(deps: NftDeps) {
  if (!deps.metadata) throw new ApiError("NOT_FOUND", "Hosted metadata needs the service's store");
  return deps.metadata;
}

/** Ids 1..count, each with a document: what a provenance covers. */
function documentsInOrder(documents: Map<bigint, string>): string[] {
  const count = documents.size;
  if (count === 0)
    throw invalid([{ path: "tokens", message: "upload the documents (PUT …/metadata) before the commit" }]);
  const ordered: string[] = [];
  for (let id = 1n; id <= BigInt(count); id++) {
    const document = documents.get(id);
    if (document === undefined)
      throw invalid([
        { path: "tokens", message: `documents must be token ids 1 to ${count} with none missing; ${id} is missing` },
      ]);
    ordered.push(document);
  }
  return ordered;
}

/** The owner check of an owner-only call (403 NOT_CONTRACT_OWNER), then the call. */
const ownerCall = (
  deps: NftDeps & { signer: TransactionSigner },
  contractAddress: string,
  data: string,
  fields: Record<string, unknown>,
) => planSetting(deps.chain, deps.signer, { contractAddress, isCurrent: async () => false, data, fields });

export const commitMetadataRoute = defineWrite({
  path: "/collections/{address}/metadata/commit",
  pathFields: { contractAddress: "address" },
  operation: "commitMetadata",
  access: ACCESS,
  summary: "Freeze a collection's documents and set their provenance on chain (setProvenance)",
  description:
    "The provenance is keccak256(concat(keccak256(document 1), …, keccak256(document count))), each document in its RFC 8785 bytes. After it, PUT …/metadata is 409 METADATA_FROZEN. Once per collection.",
  body: OwnerBody.openapi("CommitMetadataRequest"),
  response: settingResponseSchema({ provenance: z.string(), count: z.number().int() }).openapi(
    "CommitMetadataResponse",
  ),
  errors: [...OWNER_SETTING_ERRORS, "METADATA_FROZEN"],
  async plan(input, deps) {
    const metadata = metadataOf(deps);
    const { chain } = deps;
    const at = input.contractAddress;
    const onChain = await metadata.service.readReveal(at);
    const stored = await metadata.service.store.find(metadata.service.chainId, at);
    if (onChain.count > 0n) {
      if (stored?.provenance === onChain.provenance && BigInt(stored?.count ?? 0) === onChain.count)
        return planSetting(chain, deps.signer, {
          contractAddress: at,
          isCurrent: async () => true,
          data: "0x",
          fields: { provenance: stored!.provenance, count: stored!.count },
        });
      throw frozen(at);
    }
    // Ownership before anything is frozen: another key gets 403 and changes nothing.
    const owner = await chain.read(at, () => chain.view(at, "owner", []));
    if (owner.toLowerCase() !== deps.signer.address.toLowerCase())
      throw new ApiError("NOT_CONTRACT_OWNER", `Only the owner of collection ${at}, ${owner}, may do this`);
    const { provenance, count } = await metadata.service.store.freeze(metadata.service.chainId, at, (documents) => {
      const ordered = documentsInOrder(documents);
      return { provenance: provenanceOf(ordered), count: ordered.length };
    });
    metadata.service.drop(at);
    return {
      call: { to: at, data: collectionCalls().encodeFunctionData("setProvenance", [provenance, BigInt(count)]) },
      context: { provenance, count },
    };
  },
  result: settingResult,
  async failed(input, deps) {
    const metadata = deps.metadata;
    if (!metadata) return;
    // Nothing reached the chain: the documents may change again (the chain is asked, not assumed).
    const onChain = await metadata.service.readReveal(input.contractAddress).catch(() => undefined);
    if (onChain && onChain.count === 0n)
      await metadata.service.store.unfreeze(metadata.service.chainId, input.contractAddress);
    metadata.service.drop(input.contractAddress);
  },
  async answered(answer, input, deps) {
    const metadata = deps.metadata;
    if (!metadata) return;
    const { operationId } = JSON.parse(answer.body) as { operationId?: string };
    if (operationId)
      await metadata.service.store.setOperation(metadata.service.chainId, input.contractAddress, operationId);
    metadata.service.drop(input.contractAddress);
  },
});

/** The starting index a reveal's receipt shows (Revealed(uint256)). */
function revealedIndex(receipt: Receipt, contractAddress: string): string | undefined {
  const address = contractAddress.toLowerCase();
  for (const log of receipt.logs)
    if (log.address.toLowerCase() === address && log.topics[0]?.toLowerCase() === REVEALED_TOPIC)
      return BigInt(log.data).toString();
  return undefined;
}

export const revealRoute = defineWrite({
  path: "/collections/{address}/reveal",
  pathFields: { contractAddress: "address" },
  operation: "reveal",
  access: ACCESS,
  summary: "Reveal a collection (reveal()): the starting index comes from the previous block's hash",
  description:
    "Once, after the commit (409 PROVENANCE_NOT_SET before). From then on token t is served document ((t - 1 + startingIndex) mod count) + 1.",
  body: OwnerBody.openapi("RevealRequest"),
  response: settingResponseSchema({ startingIndex: decimal.optional(), count: decimal }).openapi("RevealResponse"),
  errors: [...OWNER_SETTING_ERRORS, "PROVENANCE_NOT_SET"],
  async plan(input, deps) {
    const metadata = metadataOf(deps);
    const at = input.contractAddress;
    const onChain = await metadata.service.readReveal(at);
    if (onChain.count === 0n)
      throw new ApiError(
        "PROVENANCE_NOT_SET",
        `Commit the metadata of ${at} (POST …/metadata/commit) before the reveal`,
      );
    if (onChain.revealed)
      return planSetting(deps.chain, deps.signer, {
        contractAddress: at,
        isCurrent: async () => true,
        data: "0x",
        fields: { startingIndex: onChain.startingIndex!.toString(), count: onChain.count.toString() },
      });
    return ownerCall(deps, at, collectionCalls().encodeFunctionData("reveal"), { count: onChain.count.toString() });
  },
  result: (receipt, op) => ({
    ...op.context,
    startingIndex: revealedIndex(receipt, op.contractAddress ?? ""),
    changed: true,
  }),
  async answered(_answer, input, deps) {
    deps.metadata?.service.drop(input.contractAddress);
    deps.metadata?.tokenUris.drop(input.contractAddress);
  },
});

export const setBaseUriRoute = defineWrite({
  path: "/nft/setBaseURI",
  operation: "setBaseURI",
  access: ACCESS,
  summary: "Set the prefix of every token URI (owner only; emits ERC-4906 BatchMetadataUpdate)",
  description:
    "Always sends (the contract has no view of its base URI); a tokenURI read after the answer shows the new one.",
  body: nftBody({ ...common, baseURI: z.string().max(2048) })
    .strict()
    .openapi("SetBaseUriRequest"),
  response: settingResponseSchema({ baseURI: z.string() }).openapi("SetBaseUriResponse"),
  errors: OWNER_SETTING_ERRORS,
  plan: (input, deps) =>
    ownerCall(deps, input.contractAddress, collectionCalls().encodeFunctionData("setBaseURI", [input.baseURI]), {
      baseURI: input.baseURI,
    }),
  result: settingResult,
  async answered(_answer, input, deps) {
    deps.metadata?.tokenUris.drop(input.contractAddress);
  },
});

export const hostMetadataRoute = defineWrite({
  path: "/collections/{address}/metadata/host",
  pathFields: { contractAddress: "address" },
  operation: "hostMetadata",
  access: ACCESS,
  summary:
    "Point the collection's base URI at the documents this service hosts: {PUBLIC_URL}/metadata/{chainId}/{address}/",
  body: OwnerBody.openapi("HostMetadataRequest"),
  response: settingResponseSchema({ baseURI: z.string() }).openapi("HostMetadataResponse"),
  errors: [...OWNER_SETTING_ERRORS, "PUBLIC_URL_NOT_PUBLIC"],
  plan(input, deps) {
    const metadata = metadataOf(deps);
    requirePublicUrlFor(BigInt(metadata.service.chainId), metadata.publicUrl());
    const baseURI = `${metadata.publicUrl()}/metadata/${metadata.service.chainId}/${input.contractAddress}/`;
    return ownerCall(deps, input.contractAddress, collectionCalls().encodeFunctionData("setBaseURI", [baseURI]), {
      baseURI,
    });
  },
  result: settingResult,
  async answered(_answer, input, deps) {
    deps.metadata?.tokenUris.drop(input.contractAddress);
  },
});

export const METADATA_WRITE_ROUTES = [commitMetadataRoute, revealRoute, setBaseUriRoute, hostMetadataRoute];
