import { getCreateAddress } from "ethers";
import { z } from "zod";
import { DEFAULT_COLLECTION, deployTransaction } from "../chain/collection";
import { ApiError } from "../http/errors";
import { privateKey, uint } from "./fields";
import { defineRoute, writeResponseSchema, writeResult } from "./route";

export const deployRoute = defineRoute({
  path: "/nft/deploy",
  summary: "Deploy a new reference collection owned by the caller (extension)",
  description: "Every field but privateKey is optional; contractAddress, if sent, is ignored.",
  body: z
    .object({
      privateKey,
      contractAddress: z.string().optional(),
      name: z.string().min(1).max(100).default(DEFAULT_COLLECTION.name),
      symbol: z.string().min(1).max(20).default(DEFAULT_COLLECTION.symbol),
      baseURI: z.string().max(2000).default(DEFAULT_COLLECTION.baseURI),
      cost: uint("cost").default(DEFAULT_COLLECTION.cost),
      maxSupply: uint("maxSupply")
        .refine((v) => v >= 1n, "maxSupply must be ≥ 1")
        .default(DEFAULT_COLLECTION.maxSupply),
      maxMintAmountPerTx: uint("maxMintAmountPerTx")
        .refine((v) => v >= 1n, "maxMintAmountPerTx must be ≥ 1")
        .default(DEFAULT_COLLECTION.maxMintAmountPerTx),
    })
    .openapi("DeployRequest"),
  response: writeResponseSchema({ owner: z.string() }).openapi("DeployResponse"),
  successStatus: 201,
  writes: true,
  errors: ["INSUFFICIENT_FUNDS", "CONTRACT_REVERTED"],
  async handle(input, { chain }) {
    const signer = chain.signers.get(input.privateKey);
    const tx = await deployTransaction(input);
    const outcome = await chain.write({ signer, data: tx.data });
    if (outcome.status === "confirmed" && !outcome.receipt.contractAddress) {
      throw new ApiError("INTERNAL_ERROR", "Deployment receipt has no contract address");
    }
    // A pending deployment's address is already known: it follows from the sender and its nonce.
    const contractAddress =
      outcome.status === "confirmed"
        ? outcome.receipt.contractAddress!
        : getCreateAddress({ from: signer.address, nonce: outcome.nonce });
    return writeResult(outcome, signer, contractAddress, () => ({ owner: signer.address }), 201);
  },
});
