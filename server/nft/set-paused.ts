import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { settingResponseSchema } from "../engine";
import { common, nftBody } from "./fields";
import { OWNER_SETTING_ERRORS, planSetting, settingResult } from "./owner-setting";
import { defineWrite } from "./route";

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
  description: "Setting the current state sends nothing and answers changed:false.",
  body: nftBody({ ...common, state }).openapi("SetPausedRequest"),
  response: settingResponseSchema({ paused: z.boolean() }).openapi("SetPausedResponse"),
  errors: OWNER_SETTING_ERRORS,
  plan: (input, { chain, signer }) =>
    planSetting(chain, signer, {
      contractAddress: input.contractAddress,
      isCurrent: async () => (await chain.view(input.contractAddress, "paused", [])) === input.state,
      data: collectionCalls().encodeFunctionData("setPaused", [input.state]),
      fields: { paused: input.state },
    }),
  result: settingResult,
});
