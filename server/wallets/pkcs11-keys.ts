import { ApiError } from "../http/errors";
import type { Logger } from "../http/logger";
import { Pkcs11Signer, Pkcs11SignerError, Pkcs11Token } from "../signers/pkcs11";

/** PKCS11_MODULE, PKCS11_TOKEN_LABEL, PKCS11_PIN. */
export interface Pkcs11Settings {
  module: string;
  tokenLabel: string;
  pin: string;
}

/**
 * The PKCS#11 token of the `pkcs11` wallets: opened (and logged in) on first use, once per
 * process, and its signers kept by key label, so a signature costs the token's work and nothing
 * more. A failed open is not remembered: the next use tries again (a token plugged in later).
 */
export class Pkcs11Keys {
  private token?: Promise<Pkcs11Token>;
  private readonly signers = new Map<string, Promise<Pkcs11Signer>>();

  constructor(
    private readonly settings: Pkcs11Settings | undefined,
    private readonly logger: Logger,
  ) {}

  get configured(): boolean {
    return this.settings !== undefined;
  }

  /** The signer of the key labelled `keyLabel`; throws Pkcs11SignerError (never naming the PIN). */
  signer(keyLabel: string): Promise<Pkcs11Signer> {
    let signer = this.signers.get(keyLabel);
    if (!signer) {
      signer = this.open().then((token) => Pkcs11Signer.open(token, keyLabel));
      this.signers.set(keyLabel, signer);
      signer.catch(() => this.signers.delete(keyLabel));
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
      const opening = Pkcs11Token.open({
        modulePath: settings.module,
        tokenLabel: settings.tokenLabel,
        pin: settings.pin,
      });
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
