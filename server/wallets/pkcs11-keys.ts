import type { TransactionRequest, TypedDataDomain, TypedDataField } from "ethers";
import { ApiError } from "../http/errors";
import type { Logger } from "../http/logger";
import { Pkcs11Signer, Pkcs11SignerError, Pkcs11Token } from "../signers/pkcs11";
import type { TransactionSigner } from "../signers/signer";

/** PKCS11_MODULE, PKCS11_TOKEN_LABEL, PKCS11_PIN. */
export interface Pkcs11Settings {
  module: string;
  tokenLabel: string;
  pin: string;
}

/** A key of the token as a signer: a failure to sign is 503 SIGNER_UNAVAILABLE, and tells the keys to check the token. */
export class TokenKeySigner implements TransactionSigner {
  readonly kind = "pkcs11";
  readonly address: string;

  constructor(
    private readonly signer: Pkcs11Signer,
    private readonly failed: () => Promise<void>,
  ) {
    this.address = signer.address;
  }

  signTransaction(tx: TransactionRequest): Promise<string> {
    return this.signing(() => this.signer.signTransaction(tx));
  }

  signTypedData(
    domain: TypedDataDomain,
    types: Record<string, TypedDataField[]>,
    value: Record<string, unknown>,
  ): Promise<string> {
    return this.signing(() => this.signer.signTypedData(domain, types, value));
  }

  private async signing(sign: () => Promise<string>): Promise<string> {
    try {
      return await sign();
    } catch (err) {
      if (!(err instanceof Pkcs11SignerError)) throw err;
      await this.failed();
      throw signerUnavailable(err);
    }
  }
}

/** 503 SIGNER_UNAVAILABLE for a token failure (its message names the token and key labels, never the PIN). */
export function signerUnavailable(err: Pkcs11SignerError): ApiError {
  return new ApiError(
    "SIGNER_UNAVAILABLE",
    `The wallet's PKCS#11 token cannot sign now: ${err.message}. Retry once the token is present; the service logs in to it again by itself`,
    undefined,
    { "Retry-After": "5" },
  );
}

/**
 * The PKCS#11 token of the `pkcs11` wallets: opened (and logged in) on first use, once per
 * process, and its signers kept by key label, so a signature costs the token's work and nothing
 * more. A failed open is not remembered: the next use tries again (a token plugged in later). A
 * token found absent or logged out after a failure is closed, so the next use opens it and logs
 * in again once it is back.
 */
export class Pkcs11Keys {
  private token?: Promise<Pkcs11Token>;
  /**
   * The close of a token found lost, which the next open waits for: only the module's last close
   * finalizes it, and only a module initialized anew sees the token again.
   */
  private closing: Promise<void> = Promise.resolve();
  private readonly signers = new Map<string, Promise<TokenKeySigner>>();

  constructor(
    private readonly settings: Pkcs11Settings | undefined,
    private readonly logger: Logger,
  ) {}

  get configured(): boolean {
    return this.settings !== undefined;
  }

  /**
   * The signer of the key labelled `keyLabel`; throws Pkcs11SignerError (never naming the PIN):
   * KEY_NOT_FOUND only while the token is present and logged in, TOKEN_NOT_FOUND when it is not.
   */
  signer(keyLabel: string): Promise<TokenKeySigner> {
    let signer = this.signers.get(keyLabel);
    if (!signer) {
      const opening = this.open();
      signer = opening
        .then((token) => Pkcs11Signer.open(token, keyLabel))
        .then(
          (found) => new TokenKeySigner(found, () => this.failedWith(opening, keyLabel)),
          async (err: unknown) => {
            // A key not found in a token that lost its login is the token's absence, not the key's.
            if (err instanceof Pkcs11SignerError && err.reason.startsWith("KEY_") && (await this.lost(opening)))
              throw new Pkcs11SignerError(
                "TOKEN_NOT_FOUND",
                `PKCS#11 token "${this.settings!.tokenLabel}" is absent or logged out`,
              );
            throw err;
          },
        );
      this.signers.set(keyLabel, signer);
      signer.catch(() => {
        if (this.signers.get(keyLabel) === signer) this.signers.delete(keyLabel);
      });
    }
    return signer;
  }

  /**
   * Opens and logs in to the token now (at start), so a wrong setting shows in the log at once; a
   * failure is only logged: the first use tries again (a token plugged in or unlocked later).
   */
  warmUp(): void {
    if (this.settings) this.open().catch(() => {});
  }

  /** Forgets a key's signer (its key was replaced or removed in the token): the next use looks it up again. */
  forget(keyLabel: string): void {
    this.signers.delete(keyLabel);
  }

  async close(): Promise<void> {
    const token = this.token;
    this.token = undefined;
    this.signers.clear();
    await (await token?.catch(() => undefined))?.close();
  }

  /** After a signature failed: a token gone is closed (to be opened again), a key gone is looked up again. */
  private async failedWith(opening: Promise<Pkcs11Token>, keyLabel: string): Promise<void> {
    if (!(await this.lost(opening))) this.forget(keyLabel);
  }

  /**
   * Whether the token `opening` opened is absent or logged out; if so, and it is still the one in
   * use, it is closed and forgotten with its signers, so the next use opens it and logs in again.
   */
  private async lost(opening: Promise<Pkcs11Token>): Promise<boolean> {
    const token = await opening.catch(() => undefined);
    if (token && (await token.available())) return false;
    if (this.token === opening) {
      this.token = undefined;
      this.signers.clear();
      this.logger.warn(
        { tokenLabel: this.settings?.tokenLabel },
        "PKCS#11 token absent or logged out: closed; the next signature opens it and logs in again",
      );
      this.closing = (token?.close() ?? Promise.resolve()).catch((err: unknown) => {
        this.logger.warn({ err: { message: (err as Error).message } }, "closing the lost PKCS#11 token failed");
      });
      await this.closing;
    }
    return true;
  }

  private open(): Promise<Pkcs11Token> {
    const settings = this.settings;
    if (!settings) {
      return Promise.reject(
        new ApiError(
          "VALIDATION_ERROR",
          "This service has no PKCS#11 token: set PKCS11_MODULE, PKCS11_TOKEN_LABEL and PKCS11_PIN",
          [{ path: "kind", message: "pkcs11 wallets need PKCS11_MODULE, PKCS11_TOKEN_LABEL and PKCS11_PIN" }],
        ),
      );
    }
    if (!this.token) {
      const opening = this.closing.then(() =>
        Pkcs11Token.open({ modulePath: settings.module, tokenLabel: settings.tokenLabel, pin: settings.pin }),
      );
      this.token = opening;
      opening.then(
        () => this.logger.info({ tokenLabel: settings.tokenLabel }, "PKCS#11 token opened"),
        (err: unknown) => {
          if (this.token === opening) this.token = undefined;
          this.logger.warn({ err: { message: (err as Error).message } }, "opening the PKCS#11 token failed");
        },
      );
    }
    return this.token;
  }
}

export { Pkcs11SignerError };
