import { collectionCalls } from "../chain/collection-abi";
import { settingResponseSchema } from "../engine";
import { common, decimal, uint, nftBody } from "./fields";
import { OWNER_SETTING_ERRORS, planSetting, settingResult } from "./owner-setting";
import { defineWrite } from "./route";

export const setCostRoute = defineWrite({
  path: "/nft/setCost",
  operation: "setCost",
  access: { scope: "nft:configure", key: "open", bodyCollection: "contractAddress" },
  summary: "Set the price of one token in wei (owner only)",
  description: "Setting the current cost sends nothing and answers changed:false.",
  body: nftBody({ ...common, cost: uint("cost") }).openapi("SetCostRequest"),
  response: settingResponseSchema({ cost: decimal }).openapi("SetCostResponse"),
  errors: OWNER_SETTING_ERRORS,
  plan: (input, { chain, signer }) =>
    planSetting(chain, signer, {
      contractAddress: input.contractAddress,
      isCurrent: async () => (await chain.view(input.contractAddress, "cost", [])) === input.cost,
      data: collectionCalls().encodeFunctionData("setCost", [input.cost]),
      fields: { cost: input.cost.toString() },
    }),
  result: settingResult,
});
