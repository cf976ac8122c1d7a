import { editionsCalls } from "../chain/editions-abi";
import { writeResponseSchema } from "../engine";
import { common, decimal, nftBody, uint } from "./fields";
import { createdEditionId } from "./receipt-events";
import { requireEditions } from "../chain/standard-guard";
import { defineWrite } from "./route";

export const createEditionRoute = defineWrite({
  path: "/nft/createEdition",
  operation: "createEdition",
  access: { scope: "nft:configure", key: "open", bodyCollection: "contractAddress" },
  summary: "Create the next edition of an ERC-1155 editions contract (owner only)",
  description:
    "Editions are numbered from 1, in order; the answer's tokenId is the new one's (from its EditionCreated event). On an ERC-721 collection: 400 VALIDATION_ERROR.",
  body: nftBody({
    ...common,
    cost: uint("cost").openapi({ description: "The price of one token in wei (at most 2^128 - 1)", example: "0" }),
    maxSupply: uint("maxSupply").openapi({
      description: "The most tokens of the edition that will ever exist; 0 for an open edition (no cap)",
      example: "100",
    }),
    maxMintAmountPerTx: uint("maxMintAmountPerTx", { min: 1n, max: 2n ** 32n - 1n }).openapi({
      description: "The most tokens one mint may create, 1 to 2^32 - 1",
      example: "5",
    }),
  }).openapi("CreateEditionRequest"),
  response: writeResponseSchema({ tokenId: decimal }).openapi("CreateEditionResponse"),
  errors: [
    "INSUFFICIENT_FUNDS",
    "NOT_CONTRACT_OWNER",
    "CONTRACT_NOT_FOUND",
    "UNSUPPORTED_CONTRACT",
    "CONTRACT_REVERTED",
  ],
  async plan(input, { chain }) {
    await requireEditions(chain, input.contractAddress, "createEdition");
    return {
      call: {
        to: input.contractAddress,
        data: editionsCalls().encodeFunctionData("createEdition", [
          input.cost,
          input.maxSupply,
          input.maxMintAmountPerTx,
        ]),
      },
      context: {},
    };
  },
  result: (receipt, op) => ({ tokenId: createdEditionId(receipt, op.contractAddress!) }),
});
