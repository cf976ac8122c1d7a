import { z } from "zod";
import { common, decimal, uint } from "./fields";
import { assertOwner } from "./owner-check";
import { defineRoute, writeResponseSchema, writeResult } from "./route";

export const setCostRoute = defineRoute({
  path: "/nft/setCost",
  summary: "Set the price of one token in wei (owner only)",
  description: "Setting the current cost sends nothing and answers changed:false.",
  body: z.object({ ...common, cost: uint("cost") }).openapi("SetCostRequest"),
  response: writeResponseSchema({ cost: decimal, changed: z.boolean() })
    .partial({
      status: true,
      transactionHash: true,
      blockNumber: true,
      from: true,
      contractAddress: true,
      gasUsed: true,
    })
    .openapi("SetCostResponse"),
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
    const [cost, owner]: [bigint, string] = await chain.read(input.contractAddress, () =>
      Promise.all([collection.cost(), collection.owner()]),
    );
    assertOwner(owner, signer.address);
    if (cost === input.cost) return { body: { cost: cost.toString(), changed: false } };
    const outcome = await chain.write({
      signer,
      to: input.contractAddress,
      data: collection.interface.encodeFunctionData("setCost", [input.cost]),
    });
    return writeResult(outcome, signer, input.contractAddress, () => ({ cost: input.cost.toString(), changed: true }));
  },
});
