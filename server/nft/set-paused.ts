import { z } from "zod";
import { common } from "./fields";
import { applySetting, OWNER_SETTING_ERRORS, settingResponseSchema } from "./owner-setting";
import { defineRoute } from "./route";

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
  response: settingResponseSchema({ paused: z.boolean() }).openapi("SetPausedResponse"),
  writes: true,
  errors: OWNER_SETTING_ERRORS,
  handle: (input, { chain }) =>
    applySetting(chain, {
      ...input,
      read: ["paused", []],
      isCurrent: (paused) => paused === input.state,
      call: ["setPaused", [input.state]],
      fields: { paused: input.state },
    }),
});
