import { z } from "zod";
import { common } from "./fields";
import { assertOwner } from "./owner-check";
import { defineRoute, writeResponseSchema, writeResult } from "./route";

/** A JSON boolean; the strings "true" and "false" are accepted too (the source document is ambiguous). */
const state = z
  .union([z.boolean(), z.enum(["true", "false"])], { error: "state must be true or false" })
  .transform((v) => v === true || v === "true")
  .openapi({ type: "boolean", description: 'true to pause; the strings "true"/"false" are accepted' });

export const setPausedRoute = defineRoute({
  path: "/nft/setPaused",
  summary: "Pause or resume minting (owner only)",
  description: "Setting the current state sends nothing and answers changed:false.",
  body: z.object({ ...common, state }).openapi("SetPausedRequest"),
  response: writeResponseSchema({ paused: z.boolean(), changed: z.boolean() })
    .partial({
      status: true,
      transactionHash: true,
      blockNumber: true,
      from: true,
      contractAddress: true,
      gasUsed: true,
    })
    .openapi("SetPausedResponse"),
  writes: true,
  errors: [
    "INSUFFICIENT_FUNDS",
    "NOT_CONTRACT_OWNER",
    "CONTRACT_NOT_FOUND",
    "UNSUPPORTED_CONTRACT",
    "CONTRACT_REVERTED",
  ],
  async handle(input, { chain }) {
    const signer = chain.signers.get(input.privateKey);
    const collection = chain.collection(input.contractAddress);
    const [paused, owner]: [boolean, string] = await chain.read(input.contractAddress, () =>
      Promise.all([collection.paused(), collection.owner()]),
    );
    assertOwner(owner, signer.address);
    if (paused === input.state) return { body: { paused, changed: false } };
    const outcome = await chain.write({
      signer,
      to: input.contractAddress,
      data: collection.interface.encodeFunctionData("setPaused", [input.state]),
    });
    return writeResult(outcome, signer, input.contractAddress, () => ({ paused: input.state, changed: true }));
  },
});
