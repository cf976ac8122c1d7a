import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { requireErc721 } from "../chain/standard-guard";
import { writeResponseSchema } from "../engine";
import { ApiError } from "../http/errors";
import { common, decimal, nftBody, uint } from "./fields";
import { mintedTokenIds } from "./receipt-events";
import { defineWrite } from "./route";

export const allowlistMintRoute = defineWrite({
  path: "/nft/allowlistMint",
  operation: "allowlistMint",
  access: { scope: "nft:mint", key: "open", bodyCollection: "contractAddress" },
  summary: "Mint as an allowlisted address, at its price; the service supplies the proof",
  description:
    "The caller's allowance, price and Merkle proof come from the allowlist the service keeps (PUT /collections/{address}/allowlist); the value sent is price × mintAmount.",
  body: nftBody({ ...common, mintAmount: uint("mintAmount") }).openapi("AllowlistMintRequest"),
  response: writeResponseSchema({ tokenIds: z.array(decimal), value: decimal }).openapi("AllowlistMintResponse"),
  errors: [
    "INSUFFICIENT_FUNDS",
    "NOT_ALLOWLISTED",
    "ALLOWANCE_EXCEEDED",
    "CONTRACT_NOT_FOUND",
    "CONTRACT_PAUSED",
    "MAX_SUPPLY_EXCEEDED",
    "INVALID_MINT_AMOUNT",
    "INCORRECT_PAYMENT",
    "UNSUPPORTED_CONTRACT",
    "CONTRACT_REVERTED",
  ],
  async plan(input, { chain, signer, drops }) {
    await requireErc721(chain, input.contractAddress, "Allowlists are");
    const leaf = await drops?.allowlists.leaf(input.contractAddress, signer.address);
    if (!leaf)
      throw new ApiError("NOT_ALLOWLISTED", `${signer.address} is not on the allowlist of ${input.contractAddress}`);
    const value = leaf.price * input.mintAmount;
    if (value >= 2n ** 256n)
      throw new ApiError("INVALID_MINT_AMOUNT", `mintAmount ${input.mintAmount} is far above maxMintAmountPerTx`);
    return {
      call: {
        to: input.contractAddress,
        data: collectionCalls().encodeFunctionData("allowlistMint", [
          input.mintAmount,
          leaf.allowance,
          leaf.price,
          leaf.proof,
        ]),
        value,
      },
      context: { value: value.toString() },
    };
  },
  result: (receipt, op) => ({
    tokenIds: mintedTokenIds(receipt, op.contractAddress!),
    value: op.context.value,
  }),
});
