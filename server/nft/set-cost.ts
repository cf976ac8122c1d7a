import { collectionCalls } from "../chain/collection-abi";
import { editionsCalls } from "../chain/editions-abi";
import { settingResponseSchema } from "../engine";
import { common, decimal, uint, nftBody } from "./fields";
import { OWNER_SETTING_ERRORS, planSetting, settingResult } from "./owner-setting";
import { defineWrite } from "./route";
import { editionTokenId, tokenIdFor } from "./standard";

export const setCostRoute = defineWrite({
  path: "/nft/setCost",
  operation: "setCost",
  access: { scope: "nft:configure", key: "open", bodyCollection: "contractAddress" },
  summary: "Set the price of one token in wei (owner only)",
  description:
    "Setting the current cost sends nothing and answers changed:false. On an ERC-1155 editions contract, `tokenId` names the edition whose price this sets (required there, refused on an ERC-721).",
  body: nftBody({ ...common, tokenId: editionTokenId, cost: uint("cost") }).openapi("SetCostRequest"),
  response: settingResponseSchema({
    tokenId: decimal.optional().openapi({ description: "ERC-1155: the edition" }),
    cost: decimal,
  }).openapi("SetCostResponse"),
  errors: [...OWNER_SETTING_ERRORS, "TOKEN_NOT_FOUND"],
  async plan(input, { chain, signer }) {
    const at = input.contractAddress;
    const { tokenId } = await tokenIdFor(chain, at, input.tokenId);
    if (tokenId !== undefined)
      return planSetting(chain, signer, {
        contractAddress: at,
        isCurrent: async () => (await chain.viewEdition(at, "cost", [tokenId])) === input.cost,
        data: editionsCalls().encodeFunctionData("setCost", [tokenId, input.cost]),
        fields: { tokenId: tokenId.toString(), cost: input.cost.toString() },
      });
    return planSetting(chain, signer, {
      contractAddress: at,
      isCurrent: async () => (await chain.view(at, "cost", [])) === input.cost,
      data: collectionCalls().encodeFunctionData("setCost", [input.cost]),
      fields: { cost: input.cost.toString() },
    });
  },
  result: settingResult,
});
