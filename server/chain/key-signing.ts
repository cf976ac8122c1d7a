import { isPrivate, pointFromScalar, signRecoverable } from "tiny-secp256k1";
import {
  dataSlice,
  getAddress,
  getBytes,
  hexlify,
  keccak256,
  Signature,
  Transaction,
  TypedDataEncoder,
  Wallet,
  type TransactionLike,
  type TransactionRequest,
  type TypedDataDomain,
  type TypedDataField,
} from "ethers";

/**
 * A secp256k1 key held in memory, signing through libsecp256k1 (WASM, tiny-secp256k1) instead of
 * ethers' JavaScript curve: the same RFC 6979 signatures, hence the same bytes as ethers'
 * `Wallet.signTransaction`, in a fifth of the time, and an address without the 100 ms table
 * ethers builds on its first key. A burst's 200 signatures ran on one event loop before its
 * broadcast: they were its largest cost. What this path does not take (a `from`, a `to` that is
 * a name) goes through an ethers Wallet made on demand.
 */
export class MemoryKey {
  readonly address: string;
  private wallet?: Wallet;

  private constructor(private readonly key: Uint8Array) {
    const publicKey = pointFromScalar(key, false)!;
    this.address = getAddress(dataSlice(keccak256(publicKey.subarray(1)), 12));
  }

  /** The key of 32 bytes of hex (0x…), or null when it is no valid secp256k1 private key. */
  static fromHex(hex: string): MemoryKey | null {
    const key = getBytes(hex);
    return key.length === 32 && isPrivate(key) ? new MemoryKey(key) : null;
  }

  async signTransaction(tx: TransactionRequest): Promise<string> {
    const plainTo = tx.to == null || (typeof tx.to === "string" && /^0x[0-9a-fA-F]{40}$/.test(tx.to));
    if (tx.from != null || !plainTo) return this.ethersWallet().signTransaction(tx);
    const unsigned = Transaction.from(tx as TransactionLike<string>);
    const { signature, recoveryId } = signRecoverable(getBytes(unsigned.unsignedHash), this.key);
    // 2 and 3 (an r above the group order) have a chance of about 2^-128: ethers' own path then.
    if (recoveryId > 1) return this.ethersWallet().signTransaction(tx);
    unsigned.signature = Signature.from({
      r: hexlify(signature.subarray(0, 32)),
      s: hexlify(signature.subarray(32, 64)),
      yParity: recoveryId as 0 | 1,
    });
    return unsigned.serialized;
  }

  /** EIP-712: the signature of the typed data's digest, as ethers' Wallet.signTypedData gives it. */
  async signTypedData(
    domain: TypedDataDomain,
    types: Record<string, TypedDataField[]>,
    value: Record<string, unknown>,
  ): Promise<string> {
    const digest = getBytes(TypedDataEncoder.hash(domain, types, value));
    const { signature, recoveryId } = signRecoverable(digest, this.key);
    if (recoveryId > 1) return this.ethersWallet().signTypedData(domain, types, value);
    return Signature.from({
      r: hexlify(signature.subarray(0, 32)),
      s: hexlify(signature.subarray(32, 64)),
      yParity: recoveryId as 0 | 1,
    }).serialized;
  }

  private ethersWallet(): Wallet {
    this.wallet ??= new Wallet(hexlify(this.key));
    return this.wallet;
  }
}
