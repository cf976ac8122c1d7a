import { z } from "zod";
import { collectionInterface } from "../chain/collection";
import { collectionCalls } from "../chain/collection-abi";
import { settingResponseSchema } from "../engine";
import { address, common, nftBody, uint } from "./fields";
import { OWNER_SETTING_ERRORS, planSetting, settingResult } from "./owner-setting";
import { defineWrite } from "./route";

/** The highest royalty the API sets: 10% (ERC-2981 itself allows up to 100%). */
export const MAX_ROYALTY_BPS = 1000n;

export const setRoyaltyRoute = defineWrite({
  path: "/nft/setRoyalty",
  operation: "setRoyalty",
  access: { scope: "nft:configure", key: "open", bodyCollection: "contractAddress" },
  summary: "Set the royalty of every token, ERC-2981 (owner only)",
  description: "When the collection already has this royalty nothing is sent and the answer has changed:false.",
  body: nftBody({
    ...common,
    receiver: address("receiver"),
    bps: uint("bps", { max: MAX_ROYALTY_BPS }),
  }).openapi("SetRoyaltyRequest"),
  response: settingResponseSchema({ receiver: z.string(), bps: z.string() }).openapi("SetRoyaltyResponse"),
  errors: OWNER_SETTING_ERRORS,
  plan: (input, { chain, signer }) =>
    planSetting(chain, signer, {
      contractAddress: input.contractAddress,
      // royaltyInfo of a price of 10,000 wei is the royalty in basis points (two outputs: chain.view reads one).
      isCurrent: async () => {
        const iface = collectionInterface();
        const answer = await chain.rpc.call<string>("eth_call", [
          { to: input.contractAddress, data: iface.encodeFunctionData("royaltyInfo", [0n, 10_000n]) },
          "latest",
        ]);
        const [receiver, amount] = iface.decodeFunctionResult("royaltyInfo", answer) as unknown as [string, bigint];
        return receiver === input.receiver && amount === input.bps;
      },
      data: collectionCalls().encodeFunctionData("setDefaultRoyalty", [input.receiver, input.bps]),
      fields: { receiver: input.receiver, bps: input.bps.toString() },
    }),
  result: settingResult,
});
