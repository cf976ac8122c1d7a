import { SigningKey, Transaction, type TransactionRequest } from "ethers";
import type { TransactionSigner } from "../signers/signer";
import type { MasterKey, Sealed } from "./master-key";

/**
 * A local wallet's signer. It holds the key sealed, as the store has it, and opens it for each
 * signature only: the plaintext key exists for the microseconds of one signTransaction and is
 * never kept between signatures. Opening costs one AES-256-GCM decryption (a few microseconds),
 * nothing beside the simulation, fee quote, store writes and broadcast of a write.
 */
export class LocalWalletSigner implements TransactionSigner {
  readonly kind = "local";

  constructor(
    readonly address: string,
    private readonly sealed: Sealed,
    private readonly masterKey: MasterKey,
  ) {}

  async signTransaction(request: TransactionRequest): Promise<string> {
    const tx = Transaction.from({
      chainId: request.chainId,
      nonce: request.nonce,
      to: request.to as string | null | undefined,
      data: request.data,
      value: request.value,
      gasLimit: request.gasLimit,
      type: request.type,
      maxFeePerGas: request.maxFeePerGas,
      maxPriorityFeePerGas: request.maxPriorityFeePerGas,
      gasPrice: request.gasPrice,
    });
    const key = this.masterKey.openWalletKey(this.address, this.sealed);
    try {
      tx.signature = new SigningKey(key).sign(tx.unsignedHash);
    } finally {
      key.fill(0);
    }
    return tx.serialized;
  }
}
