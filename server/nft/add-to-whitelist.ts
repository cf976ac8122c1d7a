import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { settingResponseSchema } from "../engine";
import { address, common, nftBody } from "./fields";
import { OWNER_SETTING_ERRORS, planSetting, settingResult } from "./owner-setting";
import { defineWrite } from "./route";

export const addToWhitelistRoute = defineWrite({
  path: "/nft/addUserAddressToWhitelist",
  operation: "addUserAddressToWhitelist",
  access: { scope: "nft:configure", key: "open", bodyCollection: "contractAddress" },
  summary: "Add an address to the whitelist (owner only)",
  description:
    "When the address is already listed nothing is sent and the answer has changed:false and no transaction fields.",
  body: nftBody({ ...common, address: address("address") }).openapi("AddToWhitelistRequest"),
  response: settingResponseSchema({ address: z.string(), whitelisted: z.literal(true) }).openapi(
    "AddToWhitelistResponse",
  ),
  errors: OWNER_SETTING_ERRORS,
  plan: (input, { chain, signer }) =>
    planSetting(chain, signer, {
      contractAddress: input.contractAddress,
      isCurrent: () => chain.view(input.contractAddress, "whitelisted", [input.address]),
      data: collectionCalls().encodeFunctionData("addUserAddressToWhitelist", [input.address]),
      fields: { address: input.address, whitelisted: true },
    }),
  result: settingResult,
});
