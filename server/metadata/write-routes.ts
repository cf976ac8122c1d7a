/**
 * The metadata writes (API.md, "Metadata"), each an operation through the engine like every write
 * (Idempotency-Key, `from` or `privateKey`, scopes): the commit of the provenance, the reveal, the
 * base URI pointed at the hosted documents, and setBaseURI.
 */
import { AbiCoder } from "ethers";
import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import type { Receipt } from "../chain/receipt";
import { settingResponseSchema } from "../engine";
import { ApiError } from "../http/errors";
import { invalid } from "../http/validation";
import { decimal } from "../http/fields";
import { common, nftBody } from "../nft/fields";
import { OWNER_SETTING_ERRORS, planSetting, settingResult } from "../nft/owner-setting";
import { defineWrite, type NftDeps } from "../nft/route";
import type { TransactionSigner } from "../signers/signer";
import { noReveal } from "./editions";
import { REVEALED_TOPIC, REVEAL_BLOCK_RESET_TOPIC } from "./events";
import { provenanceOf } from "./provenance";
import { frozen } from "./store";
import { requirePublicUrlFor } from "./public-url";

const OwnerBody = nftBody({ ...common });
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
    "The provenance is keccak256(concat(keccak256(document 1), …, keccak256(document count))), each document in its RFC 8785 bytes. After it, PUT …/metadata is 409 METADATA_FROZEN. Once per collection. An ERC-1155 edition contract has no reveal: 409 PROVENANCE_NOT_SET naming the standard.",
  body: OwnerBody.openapi("CommitMetadataRequest"),
  response: settingResponseSchema({ provenance: z.string(), count: z.number().int() }).openapi(
    "CommitMetadataResponse",
  ),
  errors: [...OWNER_SETTING_ERRORS, "METADATA_FROZEN", "PROVENANCE_NOT_SET"],
  async plan(input, deps) {
    const metadata = metadataOf(deps);
    const { chain } = deps;
    const at = input.contractAddress;
    if ((await chain.standardOf(at)) === "erc1155") throw noReveal("The metadata commit", at);
    const onChain = await metadata.service.readReveal(at);
    const { store, chainId } = metadata.service;
    const stored = await store.find(chainId, at);
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
    const compute = (documents: Map<bigint, string>) => {
      const ordered = documentsInOrder(documents);
      return { provenance: provenanceOf(ordered), count: ordered.length };
    };
    // A dry run shows the commit and keeps nothing: the documents stay open to change.
    const { provenance, count } = deps.dryRun
      ? stored?.frozen && stored.provenance !== null && stored.count !== null
        ? { provenance: stored.provenance, count: stored.count }
        : compute(await store.documents(chainId, at))
      : await store.freeze(chainId, at, compute);
    if (!deps.dryRun) metadata.service.drop(at);
    const delay = BigInt(metadata.revealDelayBlocks);
    return {
      call: {
        to: at,
        data: collectionCalls().encodeFunctionData("setProvenance", [provenance, BigInt(count), delay]),
      },
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

/** The data of the first log of `topic` the collection emitted in `receipt`. */
function logData(receipt: Receipt, contractAddress: string, topic: string): string | undefined {
  const address = contractAddress.toLowerCase();
  for (const log of receipt.logs)
    if (log.address.toLowerCase() === address && log.topics[0]?.toLowerCase() === topic) return log.data;
  return undefined;
}

/**
 * What a reveal's receipt shows: Revealed(startingIndex), or RevealBlockReset(previous, revealBlock)
 * when the reveal block was more than 256 blocks old (nothing revealed; send the reveal again then).
 */
function revealOutcome(receipt: Receipt, contractAddress: string): Record<string, unknown> {
  const revealed = logData(receipt, contractAddress, REVEALED_TOPIC);
  if (revealed !== undefined) return { startingIndex: BigInt(revealed).toString() };
  const reset = logData(receipt, contractAddress, REVEAL_BLOCK_RESET_TOPIC);
  if (reset === undefined) return {};
  const [, revealBlock] = AbiCoder.defaultAbiCoder().decode(["uint256", "uint256"], reset) as unknown as bigint[];
  return { revealed: false, revealBlock: revealBlock.toString() };
}

export const revealRoute = defineWrite({
  path: "/collections/{address}/reveal",
  pathFields: { contractAddress: "address" },
  operation: "reveal",
  access: ACCESS,
  summary:
    "Reveal a collection (reveal()): the starting index comes from the hash of the reveal block the commit fixed",
  description:
    "Once, after the commit (409 PROVENANCE_NOT_SET before) and once its revealBlock is mined (409 REVEAL_TOO_EARLY before). From then on token t is served document ((t - 1 + startingIndex) mod count) + 1. A reveal block more than 256 blocks old is moved forward instead (revealed: false, the new revealBlock): reveal again once it is mined. An ERC-1155 edition contract has no reveal: 409 PROVENANCE_NOT_SET naming the standard.",
  body: OwnerBody.openapi("RevealRequest"),
  response: settingResponseSchema({
    startingIndex: decimal.optional(),
    count: decimal,
    revealed: z.literal(false).optional(),
    revealBlock: decimal.optional(),
  }).openapi("RevealResponse"),
  errors: [...OWNER_SETTING_ERRORS, "PROVENANCE_NOT_SET", "REVEAL_TOO_EARLY"],
  async plan(input, deps) {
    const metadata = metadataOf(deps);
    const at = input.contractAddress;
    if ((await deps.chain.standardOf(at)) === "erc1155") throw noReveal("The reveal", at);
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
    // The call is simulated on the latest block, where revealBlock's own hash is not known yet: it
    // passes from the block after it on, and so does this check.
    const head = BigInt(await deps.chain.read(at, () => deps.chain.rpc.call<string>("eth_blockNumber", [])));
    if (onChain.revealBlock !== null && head <= onChain.revealBlock)
      throw new ApiError(
        "REVEAL_TOO_EARLY",
        `The reveal of ${at} waits for block ${onChain.revealBlock}, whose hash fixes the starting index, and one block after it; the chain is at ${head}`,
      );
    return ownerCall(deps, at, collectionCalls().encodeFunctionData("reveal"), { count: onChain.count.toString() });
  },
  result: (receipt, op) => ({ ...op.context, ...revealOutcome(receipt, op.contractAddress ?? ""), changed: true }),
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
  body: nftBody({ ...common, baseURI: z.string().max(2048) }).openapi("SetBaseUriRequest"),
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
