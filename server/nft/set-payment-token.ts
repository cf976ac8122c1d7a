import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { settingResponseSchema } from "../engine";
import { address, common, nftBody } from "./fields";
import { OWNER_SETTING_ERRORS, planSetting, settingResult } from "./owner-setting";
import { defineWrite } from "./route";

export const setPaymentTokenRoute = defineWrite({
  path: "/nft/setPaymentToken",
  operation: "setPaymentToken",
  access: { scope: "nft:configure", key: "open", bodyCollection: "contractAddress" },
  summary: "Set the ERC-20 token prices are in (owner only); the zero address goes back to the native coin",
  description:
    "Both standards (the whole editions contract at once). Prices are not converted: set `cost` in the token's smallest unit too (POST /nft/setCost), and withdraw before a change (withdraw sends the current payment token only). Setting the current token sends nothing and answers changed:false; an address without code is 400 VALIDATION_ERROR.",
  body: nftBody({
    ...common,
    paymentToken: address("paymentToken").openapi({
      description:
        "An ERC-20 (EIP-2612 permit for checkout); 0x0000000000000000000000000000000000000000 for the native coin",
    }),
  }).openapi("SetPaymentTokenRequest"),
  response: settingResponseSchema({
    paymentToken: z.string().openapi({ description: "The token set (the zero address: the native coin)" }),
  }).openapi("SetPaymentTokenResponse"),
  errors: OWNER_SETTING_ERRORS,
  async plan(input, { chain, signer }) {
    const at = input.contractAddress;
    // paymentToken and setPaymentToken have the same selectors on both standards.
    return planSetting(chain, signer, {
      contractAddress: at,
      isCurrent: async () =>
        (await chain.view(at, "paymentToken", [])).toLowerCase() === input.paymentToken.toLowerCase(),
      data: collectionCalls().encodeFunctionData("setPaymentToken", [input.paymentToken]),
      fields: { paymentToken: input.paymentToken },
    });
  },
  result: settingResult,
});
