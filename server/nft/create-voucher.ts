import { hexlify, randomBytes } from "ethers";
import { z } from "zod";
import { voucherDomain, voucherJson, voucherTypedData, VOUCHER_TYPES, type Voucher } from "../drops/voucher";
import { isUniqueViolation } from "../db";
import { chainField } from "../http/fields";
import { ApiError } from "../http/errors";
import { address, nftBody, signerFields, uint } from "./fields";
import { defineRead } from "./route";
import { requireErc721 } from "../chain/standard-guard";

const DEFAULT_VALID_FOR = 3600n;

export const createVoucherRoute = defineRead({
  path: "/collections/{address}/vouchers",
  pathFields: { contractAddress: "address" },
  operation: "createVoucher",
  access: { scope: "nft:vouchers", key: "open", bodyCollection: "contractAddress" },
  summary: "Sign a mint voucher (EIP-712) for a buyer, who redeems it and pays the gas",
  description:
    "`from` (or privateKey) must be the collection's voucher signer; a local or a PKCS#11 wallet. No transaction is sent. `typedData` is what eth_signTypedData_v4 takes, for the buyer's wallet.",
  body: nftBody({
    ...signerFields,
    chain: chainField,
    contractAddress: address("contractAddress"),
    to: address("to"),
    amount: uint("amount", { min: 1n }),
    price: uint("price"),
    validFor: uint("validFor", { min: 1n, max: 10n ** 10n })
      .default(DEFAULT_VALID_FOR)
      .openapi({ description: "Seconds from now (the chain's latest block) until it expires", default: "3600" }),
    id: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, "id must be 32 bytes of hex (0x…)")
      .optional()
      .openapi({ description: "The voucher's id (bytes32); unset = 32 random bytes" }),
  }).openapi("CreateVoucherRequest"),
  response: z
    .object({
      voucher: z.object({
        to: z.string(),
        amount: z.string(),
        price: z.string(),
        validUntil: z.string(),
        id: z.string(),
      }),
      signature: z.string(),
      typedData: z.record(z.string(), z.unknown()),
    })
    .openapi("CreateVoucherResponse"),
  errors: ["VOUCHER_INVALID", "INVALID_MINT_AMOUNT", "CONTRACT_NOT_FOUND", "UNSUPPORTED_CONTRACT"],
  async handle(input, { chain, caller, drops }) {
    const at = input.contractAddress;
    await requireErc721(chain, at, "Vouchers are");
    const [name, signer, maxPerTx, head] = await chain.read(at, () =>
      Promise.all([
        chain.view(at, "name", []),
        chain.view(at, "voucherSigner", []),
        chain.view(at, "maxMintAmountPerTx", []),
        chain.rpc.call<{ number: string; timestamp: string }>("eth_getBlockByNumber", ["latest", false]),
      ]),
    );
    if (signer !== caller.address)
      throw new ApiError(
        "VOUCHER_INVALID",
        `${caller.address} is not the voucher signer of ${at} (setVoucherSigner, or voucherSigner at deploy)`,
      );
    // The contract refuses to redeem more than maxMintAmountPerTx: such a voucher is never signed.
    if (input.amount > maxPerTx)
      throw new ApiError(
        "INVALID_MINT_AMOUNT",
        `amount ${input.amount} is above maxMintAmountPerTx (${maxPerTx}) of ${at}: no voucher for it could be redeemed`,
        [{ path: "amount", message: `must be at most maxMintAmountPerTx (${maxPerTx})` }],
      );
    const voucher: Voucher = {
      to: input.to,
      amount: input.amount,
      price: input.price,
      validUntil: BigInt(head.timestamp) + input.validFor,
      id: input.id?.toLowerCase() ?? hexlify(randomBytes(32)),
    };
    const domain = { name, chainId: chain.options.chainId, verifyingContract: at };
    const signature = await caller.signTypedData(voucherDomain(domain), VOUCHER_TYPES, voucherJson(voucher));
    try {
      await drops?.vouchers.save(at, voucher, caller.address, Number(BigInt(head.number)));
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      throw new ApiError("VALIDATION_ERROR", `A voucher ${voucher.id} was already signed for ${at}`, [
        { path: "id", message: "already used by another voucher of this collection" },
      ]);
    }
    return { voucher: voucherJson(voucher), signature, typedData: voucherTypedData(domain, voucher) };
  },
});
