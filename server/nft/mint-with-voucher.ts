import { Signature } from "ethers";
import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { requireErc721 } from "../chain/standard-guard";
import { VoucherBody } from "../drops/voucher";
import { writeResponseSchema } from "../engine";
import { ApiError } from "../http/errors";
import { common, decimal, nftBody } from "./fields";
import { mintedTokenIds } from "./receipt-events";
import { defineWrite } from "./route";

/**
 * The signature in its 65-byte form: the contract (OpenZeppelin 5's ECDSA) takes no 64-byte EIP-2098
 * one. Bytes that are no signature at all are sent as they are, for the contract to refuse
 * (VoucherSignerMismatch: 403 VOUCHER_INVALID).
 */
function expanded(signature: string): string {
  if (signature.length !== 2 + 128) return signature;
  try {
    return Signature.from(signature).serialized;
  } catch {
    return signature;
  }
}

export const mintWithVoucherRoute = defineWrite({
  path: "/nft/mintWithVoucher",
  operation: "mintWithVoucher",
  access: { scope: "nft:mint", key: "open", bodyCollection: "contractAddress" },
  summary: "Redeem a mint voucher signed by the collection's voucher signer (EIP-712)",
  description:
    "The caller must be the voucher's `to`; it pays amount × price (exactly) and the gas. Each voucher id mints once. A 64-byte EIP-2098 signature is expanded to 65 bytes before it is sent.",
  body: nftBody({
    ...common,
    voucher: VoucherBody,
    signature: z.string().regex(/^0x([0-9a-fA-F]{128}|[0-9a-fA-F]{130})$/, "signature must be 64 or 65 bytes of hex"),
  }).openapi("MintWithVoucherRequest"),
  response: writeResponseSchema({ tokenIds: z.array(decimal), value: decimal, voucherId: z.string() }).openapi(
    "MintWithVoucherResponse",
  ),
  errors: [
    "INSUFFICIENT_FUNDS",
    "VOUCHER_INVALID",
    "VOUCHER_USED",
    "VOUCHER_EXPIRED",
    "CONTRACT_NOT_FOUND",
    "CONTRACT_PAUSED",
    "MAX_SUPPLY_EXCEEDED",
    "INVALID_MINT_AMOUNT",
    "INCORRECT_PAYMENT",
    "UNSUPPORTED_CONTRACT",
    "CONTRACT_REVERTED",
  ],
  async plan(input, { chain }) {
    await requireErc721(chain, input.contractAddress, "Vouchers are");
    const { voucher } = input;
    const value = voucher.price * voucher.amount;
    if (value >= 2n ** 256n) throw new ApiError("INVALID_MINT_AMOUNT", "The voucher's amount × price passes 256 bits");
    return {
      call: {
        to: input.contractAddress,
        data: collectionCalls().encodeFunctionData("mintWithVoucher", [voucher, expanded(input.signature)]),
        value,
      },
      context: { value: value.toString(), voucherId: voucher.id },
    };
  },
  result: (receipt, op) => ({
    tokenIds: mintedTokenIds(receipt, op.contractAddress!),
    value: op.context.value,
    voucherId: op.context.voucherId,
  }),
});
