import {
  getBytes,
  hexlify,
  Signature,
  SigningKey,
  Transaction,
  TypedDataEncoder,
  type TransactionRequest,
  type TypedDataDomain,
  type TypedDataField,
} from "ethers";
import { signRecoverable } from "tiny-secp256k1";
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
    tx.signature = this.signDigest(tx.unsignedHash);
    return tx.serialized;
  }

  /** EIP-712: the signature of the typed data's digest, as ethers' Wallet.signTypedData gives it. */
  async signTypedData(
    domain: TypedDataDomain,
    types: Record<string, TypedDataField[]>,
    value: Record<string, unknown>,
  ): Promise<string> {
    return this.signDigest(TypedDataEncoder.hash(domain, types, value)).serialized;
  }

  private signDigest(digest: string): Signature {
    const key = this.masterKey.openWalletKey(this.address, this.sealed);
    try {
      // libsecp256k1 (as request keys sign: the same RFC 6979 bytes as ethers, a fifth of the time);
      // ethers' curve for the ~2^-128 chance of a recovery id above 1.
      const { signature, recoveryId } = signRecoverable(getBytes(digest), key);
      return recoveryId > 1
        ? new SigningKey(key).sign(digest)
        : Signature.from({
            r: hexlify(signature.subarray(0, 32)),
            s: hexlify(signature.subarray(32, 64)),
            yParity: recoveryId as 0 | 1,
          });
    } finally {
      key.fill(0);
    }
  }
}
