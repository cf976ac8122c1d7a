import {
  copyRequest,
  getAddress,
  getBytes,
  resolveAddress,
  Transaction,
  TypedDataEncoder,
  type Signature,
  type TransactionRequest,
  type TypedDataDomain,
  type TypedDataField,
} from "ethers";
import type { TransactionSigner } from "../signer";
import { ethereumSignature } from "./secp256k1";
import type { Pkcs11Key, Pkcs11Token } from "./token";

/** Signs with a secp256k1 key inside a PKCS#11 token: this process only ever sees its public key. */
export class Pkcs11Signer implements TransactionSigner {
  readonly kind = "pkcs11";
  readonly address: string;

  constructor(
    private readonly token: Pkcs11Token,
    readonly key: Pkcs11Key,
  ) {
    this.address = key.address;
  }

  /** The signer of the key labelled `keyLabel` in `token` (KEY_NOT_FOUND when there is none). */
  static async open(token: Pkcs11Token, keyLabel: string): Promise<Pkcs11Signer> {
    return new Pkcs11Signer(token, await token.findKey(keyLabel));
  }

  /** As ethers' Wallet.signTransaction: `from`, when given, must be this key's address. */
  async signTransaction(request: TransactionRequest): Promise<string> {
    const tx = copyRequest(request);
    if (tx.to != null) tx.to = await resolveAddress(tx.to);
    if (tx.from != null) {
      if (getAddress(await resolveAddress(tx.from)) !== this.address) {
        throw new Error(`transaction from address mismatch: this PKCS#11 key signs for ${this.address}`);
      }
      delete tx.from;
    }
    const unsigned = Transaction.from(tx as Parameters<typeof Transaction.from>[0]);
    unsigned.signature = await this.signDigest(unsigned.unsignedHash);
    return unsigned.serialized;
  }

  /** EIP-712: the token signs the typed data's digest (TypedDataEncoder.hash), as it signs a transaction's. */
  async signTypedData(
    domain: TypedDataDomain,
    types: Record<string, TypedDataField[]>,
    value: Record<string, unknown>,
  ): Promise<string> {
    return (await this.signDigest(TypedDataEncoder.hash(domain, types, value))).serialized;
  }

  /** An Ethereum signature (low s, v 27 or 28) of a 32-byte digest. */
  async signDigest(digest: string | Uint8Array): Promise<Signature> {
    const bytes = getBytes(digest);
    if (bytes.length !== 32) throw new RangeError(`a digest is 32 bytes, not ${bytes.length}`);
    const rs = await this.token.signDigest(this.key, bytes);
    return ethereumSignature(bytes, rs, this.key.publicKey);
  }
}
