import { getCreateAddress, keccak256 } from "ethers";
import type { Fees } from "../chain/fee-oracle";
import type { TransactionSigner } from "../signers/signer";
import type { Operation, SignedTransaction } from "./operation";

/** Signs `call` at `nonce` with `fees`, locally: the hash is known before anything is broadcast. */
export async function signCall(
  signer: TransactionSigner,
  chainId: bigint,
  nonce: number,
  call: NonNullable<Operation["call"]>,
  fees: Fees,
): Promise<SignedTransaction> {
  const raw = await signer.signTransaction({
    chainId,
    nonce,
    to: call.to,
    data: call.data,
    value: call.value,
    gasLimit: call.gasLimit,
    ...fees,
  });
  return {
    hash: keccak256(raw),
    raw,
    ...(fees.type === 2
      ? { maxFeePerGas: fees.maxFeePerGas.toString(), maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString() }
      : { gasPrice: fees.gasPrice.toString() }),
  };
}

/** The fees a signed transaction offered, to outbid when it is replaced. */
export function feesOf(tx: SignedTransaction): Fees {
  return tx.gasPrice !== undefined
    ? { type: 0, gasPrice: BigInt(tx.gasPrice) }
    : {
        type: 2,
        maxFeePerGas: BigInt(tx.maxFeePerGas ?? 0),
        maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas ?? 0),
      };
}

/** A deployment's collection address follows from its sender and nonce; other calls name theirs. */
export function targetAddress(from: string, call: NonNullable<Operation["call"]>, nonce: number): string | null {
  return call.to ?? getCreateAddress({ from, nonce });
}
