/** Why the PKCS#11 signer failed, for the wallet layer to map onto its own error codes. */
export type Pkcs11FailureReason =
  | "MODULE_UNAVAILABLE"
  | "TOKEN_NOT_FOUND"
  | "LOGIN_FAILED"
  | "KEY_NOT_FOUND"
  | "KEY_AMBIGUOUS"
  | "KEY_EXISTS"
  | "KEY_UNSUPPORTED"
  | "SIGN_FAILED"
  | "TOKEN_CLOSED";

/**
 * A PKCS#11 failure with a message a person can act on. Messages name the module path, the token
 * label and the key label, never the PIN; `returnValue` is the token's CKR_* name when it gave one.
 */
export class Pkcs11SignerError extends Error {
  constructor(
    readonly reason: Pkcs11FailureReason,
    message: string,
    readonly returnValue?: string,
  ) {
    super(returnValue ? `${message} (${returnValue})` : message);
    this.name = "Pkcs11SignerError";
  }
}

/**
 * The CKR_* name of an error thrown by pkcs11js ("CKR_PIN_INCORRECT"), or undefined for any other
 * error. Only that name is kept: pkcs11js' own messages carry a native stack, nothing a user needs.
 */
export function returnValueOf(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const match = /^(CKR_[A-Z0-9_]+)/.exec(err.message);
  return match?.[1];
}
