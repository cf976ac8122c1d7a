import { z } from "zod";
import { SETTLED_TOPICS } from "../chain/chain-client";
import { collectionCalls } from "../chain/collection-abi";
import { editionsCalls } from "../chain/editions-abi";
import { settingResponseSchema } from "../engine";
import { common, decimal, nftBody } from "./fields";
import { OWNER_SETTING_ERRORS, planSetting, settingResult } from "./owner-setting";
import { defineWrite } from "./route";
import { editionTokenId, tokenIdFor } from "./standard";

/** A JSON boolean; the strings "true" and "false" are accepted too (the source document is ambiguous). */
const state = z
  .union([z.boolean(), z.enum(["true", "false"])], { error: "state must be true or false" })
  .transform((v) => v === true || v === "true")
  .openapi({ description: 'true to pause; the strings "true"/"false" are accepted', example: true });

export const setPausedRoute = defineWrite({
  path: "/nft/setPaused",
  operation: "setPaused",
  access: { scope: "nft:configure", key: "open", bodyCollection: "contractAddress" },
  summary: "Pause or resume minting (owner only)",
  description:
    "Setting the current state sends nothing and answers changed:false. On an ERC-1155 editions contract, `{state}` pauses every edition (the contract) and `{tokenId, state}` one edition; `tokenId` is refused on an ERC-721.",
  body: nftBody({
    ...common,
    tokenId: editionTokenId.openapi({
      description: "ERC-1155 only: the one edition to pause or resume (without it, the whole contract)",
    }),
    state,
  }).openapi("SetPausedRequest"),
  response: settingResponseSchema({
    tokenId: decimal.optional().openapi({ description: "ERC-1155: the edition paused or resumed" }),
    paused: z.boolean(),
  }).openapi("SetPausedResponse"),
  errors: [...OWNER_SETTING_ERRORS, "TOKEN_NOT_FOUND"],
  async plan(input, { chain, signer }) {
    const at = input.contractAddress;
    const { tokenId, state } = input;
    // The contract's own pause is the same call on both standards: only an edition's needs the standard.
    if (tokenId === undefined)
      return planSetting(chain, signer, {
        contractAddress: at,
        // Kept per block until a header may hold its PausedChanged (SettledViews), or told by it.
        isCurrent: async () =>
          (await chain.settled(at, "paused", SETTLED_TOPICS.paused, () => chain.view(at, "paused", []))) === state,
        data: collectionCalls().encodeFunctionData("setPaused", [state]),
        fields: { paused: state },
      });
    await tokenIdFor(chain, at, tokenId); // 400 on an ERC-721
    return planSetting(chain, signer, {
      contractAddress: at,
      isCurrent: async () => (await chain.viewEdition(at, "editionPaused", [tokenId])) === state,
      data: editionsCalls().encodeFunctionData("setEditionPaused", [tokenId, state]),
      fields: { tokenId: tokenId.toString(), paused: state },
    });
  },
  result: settingResult,
});
