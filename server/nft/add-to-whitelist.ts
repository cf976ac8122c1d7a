import { z } from "zod";
import { address, common } from "./fields";
import { assertOwner } from "./owner-check";
import { defineRoute, writeResponseSchema, writeResult } from "./route";

export const addToWhitelistRoute = defineRoute({
  path: "/nft/addUserAddressToWhitelist",
  summary: "Add an address to the whitelist (owner only)",
  description:
    "When the address is already listed nothing is sent and the answer has changed:false and no transaction fields.",
  body: z.object({ ...common, address: address("address") }).openapi("AddToWhitelistRequest"),
  response: writeResponseSchema({ address: z.string(), whitelisted: z.literal(true), changed: z.boolean() })
    .partial({
      status: true,
      transactionHash: true,
      blockNumber: true,
      from: true,
      contractAddress: true,
      gasUsed: true,
    })
    .openapi("AddToWhitelistResponse"),
  writes: true,
  errors: [
    "INSUFFICIENT_FUNDS",
    "NOT_CONTRACT_OWNER",
    "CONTRACT_NOT_FOUND",
    "UNSUPPORTED_CONTRACT",
    "CONTRACT_REVERTED",
  ],
  async handle(input, { chain }) {
    const signer = chain.signers.get(input.privateKey);
    const collection = chain.collection(input.contractAddress);
    const [listed, owner]: [boolean, string] = await chain.read(input.contractAddress, () =>
      Promise.all([collection.whitelisted(input.address), collection.owner()]),
    );
    assertOwner(owner, signer.address);
    const fields = { address: input.address, whitelisted: true };
    if (listed) return { body: { ...fields, changed: false } };
    const outcome = await chain.write({
      signer,
      to: input.contractAddress,
      data: collection.interface.encodeFunctionData("addUserAddressToWhitelist", [input.address]),
    });
    return writeResult(outcome, signer, input.contractAddress, () => ({ ...fields, changed: true }));
  },
});
