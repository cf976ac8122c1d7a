import type { TransactionRequest, TypedDataDomain, TypedDataField } from "ethers";

/** Where a signing key lives: sent with the request (memory only), held by the service, or in a PKCS#11 token. */
export type SignerKind = "request" | "local" | "pkcs11";

/**
 * What the engine signs with, whatever holds the key: it asks for a signature by address and
 * never sees the key itself.
 */
export interface TransactionSigner {
  /** Checksummed address. */
  readonly address: string;
  readonly kind: SignerKind;
  /** Signs a fully populated transaction (chainId, nonce, fees and gasLimit set): the serialized signed transaction. */
  signTransaction(tx: TransactionRequest): Promise<string>;
  /** Signs EIP-712 typed data (as ethers' `signTypedData`): the 65-byte signature, hex. */
  signTypedData(
    domain: TypedDataDomain,
    types: Record<string, TypedDataField[]>,
    value: Record<string, unknown>,
  ): Promise<string>;
}

/**
 * The signers the engine can reach without a request: a request key still held in memory, or a
 * wallet the service holds. The follower asks it when an operation needs a new signature.
 */
export interface SignerDirectory {
  signerOf(address: string): Promise<TransactionSigner | undefined>;
}

/**
 * The wallets the service holds (API.md, "Wallets"), as the /nft routes reach them through `from`:
 * by address or label, among the lower-case addresses `usable` (the access key's wallets; null or
 * unset: all); 404 WALLET_NOT_FOUND, the same answer, for one it does not hold and one outside `usable`.
 */
export interface HeldWallets {
  signerFor(addressOrLabel: string, usable?: readonly string[] | null): Promise<TransactionSigner>;
}
