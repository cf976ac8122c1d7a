import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { checkOneTransaction } from "../drops/one-transaction";
import { settingResponseSchema } from "../engine";
import { unlistedFor } from "../drops/unlisted";
import { address, common, nftBody } from "./fields";
import { OWNER_SETTING_ERRORS } from "./owner-setting";
import { defineWrite } from "./route";

export const batchWhitelistRoute = defineWrite({
  path: "/nft/addToWhitelist",
  operation: "addToWhitelist",
  access: { scope: "nft:configure", key: "open", bodyCollection: "contractAddress" },
  summary: "Add many addresses to the whitelist in one transaction (owner only)",
  description:
    "One transaction for the addresses not yet listed; nothing is sent when none is new (changed:false, no transaction fields). A list whose transaction would pass MAX_GAS_PER_TX is 413.",
  body: nftBody({ ...common, addresses: z.array(address("address")).min(1) }).openapi("BatchWhitelistRequest"),
  response: settingResponseSchema({ added: z.array(z.string()), alreadyListed: z.array(z.string()) }).openapi(
    "BatchWhitelistResponse",
  ),
  errors: [...OWNER_SETTING_ERRORS, "TOO_LARGE_FOR_ONE_TRANSACTION"],
  async plan(input, { chain, signer, drops }) {
    const at = input.contractAddress;
    // The owner first, as for the one-address route (a call that changes nothing still needs it).
    const { unlisted: added, listed } = await unlistedFor(chain, at, signer.address, [...new Set(input.addresses)]);
    const fields = { added, alreadyListed: listed };
    if (added.length === 0) return { unchanged: fields, contractAddress: at };
    const encode = (n: number) => collectionCalls().encodeFunctionData("addToWhitelist", [added.slice(0, n)]);
    await checkOneTransaction(chain, drops ?? {}, {
      from: signer.address,
      to: at,
      count: added.length,
      encode,
      field: "addresses",
    });
    return { call: { to: at, data: encode(added.length) }, context: fields };
  },
  result: (_receipt, op) => ({ ...op.context, changed: true }),
});
