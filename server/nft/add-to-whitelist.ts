import { z } from "zod";
import { address, common } from "./fields";
import { applySetting, OWNER_SETTING_ERRORS, settingResponseSchema } from "./owner-setting";
import { defineRoute } from "./route";

export const addToWhitelistRoute = defineRoute({
  path: "/nft/addUserAddressToWhitelist",
  summary: "Add an address to the whitelist (owner only)",
  description:
    "When the address is already listed nothing is sent and the answer has changed:false and no transaction fields.",
  body: z.object({ ...common, address: address("address") }).openapi("AddToWhitelistRequest"),
  response: settingResponseSchema({ address: z.string(), whitelisted: z.literal(true) }).openapi(
    "AddToWhitelistResponse",
  ),
  writes: true,
  errors: OWNER_SETTING_ERRORS,
  handle: (input, { chain }) =>
    applySetting(chain, {
      ...input,
      read: ["whitelisted", [input.address]],
      isCurrent: (listed) => listed === true,
      call: ["addUserAddressToWhitelist", [input.address]],
      fields: { address: input.address, whitelisted: true },
    }),
});
