/** The PKCS#11 signer: keys inside a hardware token (or SoftHSM2), signing Ethereum transactions. */
export { Pkcs11SignerError, type Pkcs11FailureReason } from "./errors";
export { Pkcs11Signer } from "./pkcs11-signer";
export { DEFAULT_SESSIONS, Pkcs11Key, Pkcs11Token, type Pkcs11TokenOptions } from "./token";
