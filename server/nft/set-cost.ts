import { z } from "zod";
import { common, decimal, uint } from "./fields";
import { applySetting, OWNER_SETTING_ERRORS, settingResponseSchema } from "./owner-setting";
import { defineRoute } from "./route";

export const setCostRoute = defineRoute({
  path: "/nft/setCost",
  summary: "Set the price of one token in wei (owner only)",
  description: "Setting the current cost sends nothing and answers changed:false.",
  body: z.object({ ...common, cost: uint("cost") }).openapi("SetCostRequest"),
  response: settingResponseSchema({ cost: decimal }).openapi("SetCostResponse"),
  writes: true,
  errors: OWNER_SETTING_ERRORS,
  handle: (input, { chain }) =>
    applySetting(chain, {
      ...input,
      read: ["cost", []],
      isCurrent: (cost) => cost === input.cost,
      call: ["setCost", [input.cost]],
      fields: { cost: input.cost.toString() },
    }),
});
