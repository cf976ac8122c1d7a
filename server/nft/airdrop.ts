import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { editionsCalls } from "../chain/editions-abi";
import { checkOneTransaction } from "../drops/one-transaction";
import { writeResponseSchema } from "../engine";
import { address, common, decimal, nftBody, uint } from "./fields";
import { mintedTokenIds } from "./receipt-events";
import { defineWrite } from "./route";
import { editionTokenId, tokenIdFor } from "./standard";

const Recipient = z
  .object({
    address: address("address"),
    amount: uint("amount", { min: 1n }),
  })
  .strict();

export const airdropRoute = defineWrite({
  path: "/nft/airdrop",
  operation: "airdrop",
  access: { scope: "nft:mintForFree", key: "open", bodyCollection: "contractAddress" },
  summary: "Mint to many recipients in one transaction (owner only; works while paused)",
  description:
    "Through the contract's airdrop(address[],uint256[]). A list whose transaction would pass MAX_GAS_PER_TX is 413 TOO_LARGE_FOR_ONE_TRANSACTION, naming how many fit: larger lists go through jobs. On an ERC-1155 editions contract, `tokenId` names the edition (required there, refused on an ERC-721): airdrop(id, address[], uint256[]), and each recipient is answered with its `amount` instead of `tokenIds`.",
  body: nftBody({ ...common, tokenId: editionTokenId, recipients: z.array(Recipient).min(1) }).openapi(
    "AirdropRequest",
  ),
  response: writeResponseSchema({
    tokenId: decimal.optional().openapi({ description: "ERC-1155: the edition airdropped" }),
    recipients: z.array(
      z.object({
        address: z.string(),
        tokenIds: z.array(decimal).optional().openapi({ description: "ERC-721: the ids this recipient received" }),
        amount: decimal.optional().openapi({ description: "ERC-1155: how many tokens of the edition it received" }),
      }),
    ),
  }).openapi("AirdropResponse"),
  errors: [
    "INSUFFICIENT_FUNDS",
    "NOT_CONTRACT_OWNER",
    "CONTRACT_NOT_FOUND",
    "MAX_SUPPLY_EXCEEDED",
    "INVALID_MINT_AMOUNT",
    "TOKEN_NOT_FOUND",
    "TOO_LARGE_FOR_ONE_TRANSACTION",
    "UNSUPPORTED_CONTRACT",
    "CONTRACT_REVERTED",
  ],
  async plan(input, { chain, signer, drops }) {
    const { tokenId } = await tokenIdFor(chain, input.contractAddress, input.tokenId);
    const lists = (n: number) =>
      [input.recipients.slice(0, n).map((r) => r.address), input.recipients.slice(0, n).map((r) => r.amount)] as const;
    const encode = (n: number) =>
      tokenId === undefined
        ? collectionCalls().encodeFunctionData("airdrop", [...lists(n)])
        : editionsCalls().encodeFunctionData("airdrop", [tokenId, ...lists(n)]);
    await checkOneTransaction(chain, drops ?? {}, {
      from: signer.address,
      to: input.contractAddress,
      count: input.recipients.length,
      encode,
      field: "recipients",
    });
    return {
      call: { to: input.contractAddress, data: encode(input.recipients.length) },
      context: {
        ...(tokenId !== undefined ? { tokenId: tokenId.toString() } : {}),
        recipients: input.recipients.map((r) => ({ address: r.address, amount: r.amount.toString() })),
      },
    };
  },
  result: (receipt, op) => {
    // An edition's airdrop mints exactly each recipient's amount of its id, or reverts.
    if (op.context.tokenId !== undefined) return { tokenId: op.context.tokenId, recipients: op.context.recipients };
    // The contract mints in list order, each recipient's tokens consecutive.
    const ids = mintedTokenIds(receipt, op.contractAddress!);
    let next = 0;
    const planned = op.context.recipients as { address: string; amount: string }[];
    return {
      recipients: planned.map((r) => {
        const tokenIds = ids.slice(next, next + Number(r.amount));
        next += Number(r.amount);
        return { address: r.address, tokenIds };
      }),
    };
  },
});
