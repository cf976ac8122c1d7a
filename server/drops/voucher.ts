import { TypedDataEncoder, type TypedDataField } from "ethers";
import { z } from "zod";
import { address, uint } from "../http/fields";

/** The EIP-712 type the reference contract checks (NFTCollection.mintWithVoucher). */
export const VOUCHER_TYPES: Record<string, TypedDataField[]> = {
  Voucher: [
    { name: "to", type: "address" },
    { name: "amount", type: "uint256" },
    { name: "price", type: "uint256" },
    { name: "validUntil", type: "uint64" },
    { name: "id", type: "bytes32" },
  ],
};

export interface Voucher {
  to: string;
  amount: bigint;
  price: bigint;
  validUntil: bigint;
  id: string;
}

/** A voucher in a request body: integers as decimal strings or JSON integers. */
export const VoucherBody = z
  .object({
    to: address("to"),
    amount: uint("amount"),
    price: uint("price"),
    validUntil: uint("validUntil", { max: 2n ** 64n - 1n }),
    id: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "id must be 32 bytes of hex (0x…)"),
  })
  .strict()
  .openapi("Voucher");

export interface VoucherDomain {
  name: string;
  chainId: bigint;
  verifyingContract: string;
}

/** The voucher as JSON: integers as decimal strings. */
export const voucherJson = (v: Voucher) => ({
  to: v.to,
  amount: v.amount.toString(),
  price: v.price.toString(),
  validUntil: v.validUntil.toString(),
  id: v.id,
});

/** The domain of a collection's vouchers: its name, version "1", the chain and the collection. */
export const voucherDomain = (d: VoucherDomain) => ({
  name: d.name,
  version: "1",
  chainId: d.chainId,
  verifyingContract: d.verifyingContract,
});

/**
 * The typed data as eth_signTypedData_v4 takes it (EIP712Domain listed, integers as decimal
 * strings), for a buyer's browser wallet; ethers' TypedDataEncoder.getPayload writes it.
 */
export function voucherTypedData(domain: VoucherDomain, voucher: Voucher) {
  return TypedDataEncoder.getPayload(voucherDomain(domain), VOUCHER_TYPES, voucherJson(voucher));
}
