import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { readFileIfAny, writeSecretFile } from "../runtime/secret-file";
import path from "node:path";
import { masterKeyBytes } from "../config/config";

/** A secret sealed with AES-256-GCM: what the store keeps instead of it. */
export interface Sealed {
  ciphertext: Buffer;
  /** 12 random bytes, new for every sealing. */
  nonce: Buffer;
  tag: Buffer;
}

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
/** The associated data of a wallet's key: its address, so a key moved to another row does not open. */
const walletAad = (address: string) => Buffer.from(`nft-ops wallet key v1:${address.toLowerCase()}`, "utf8");
/** The associated data of a webhook endpoint's secret: its id, so a secret moved to another endpoint does not open. */
const webhookAad = (endpointId: string) => Buffer.from(`nft-ops webhook secret v1:${endpointId}`, "utf8");
/** The key-check value: this constant sealed under the master key. */
const CHECK_AAD = Buffer.from("nft-ops wallet master key check v1", "utf8");
const CHECK_PLAINTEXT = Buffer.from("the wallets of this store are sealed under this key", "utf8");

/**
 * WALLET_MASTER_KEY at work: seals and opens the wallets' private keys (AES-256-GCM, the wallet's
 * address as associated data), the webhook endpoints' secrets (their id as associated data) and
 * the store's key-check value. Holds the master key; never gives it out.
 */
export class MasterKey {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new RangeError(`a master key is ${KEY_BYTES} bytes`);
    this.#key = Buffer.from(key);
  }

  static generate(): MasterKey {
    return new MasterKey(randomBytes(KEY_BYTES));
  }

  sealWalletKey(address: string, privateKey: Buffer): Sealed {
    return this.seal(privateKey, walletAad(address));
  }

  /** The private key of `address`; throws when the key is not this master key's or the row was tampered with. */
  openWalletKey(address: string, sealed: Sealed): Buffer {
    return this.open(sealed, walletAad(address));
  }

  sealWebhookSecret(endpointId: string, secret: Buffer): Sealed {
    return this.seal(secret, webhookAad(endpointId));
  }

  /** A webhook endpoint's secret; throws when the key is not this master key's or the row was tampered with. */
  openWebhookSecret(endpointId: string, sealed: Sealed): Buffer {
    return this.open(sealed, webhookAad(endpointId));
  }

  keyCheck(): Sealed {
    return this.seal(CHECK_PLAINTEXT, CHECK_AAD);
  }

  /** Whether `check` was sealed under this master key. */
  opensKeyCheck(check: Sealed): boolean {
    try {
      return this.open(check, CHECK_AAD).equals(CHECK_PLAINTEXT);
    } catch {
      return false;
    }
  }

  /** The key as 64 hex characters, for the master key file (never for a log or a banner). */
  toFileText(): string {
    return `${this.#key.toString("hex")}\n`;
  }

  private seal(plaintext: Buffer, aad: Buffer): Sealed {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, nonce);
    cipher.setAAD(aad);
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { ciphertext, nonce, tag: cipher.getAuthTag() };
  }

  private open(sealed: Sealed, aad: Buffer): Buffer {
    const decipher = createDecipheriv("aes-256-gcm", this.#key, sealed.nonce);
    decipher.setAAD(aad);
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  }
}

/** Where `npm start` keeps the master key it made, when WALLET_MASTER_KEY is not set. */
export const MASTER_KEY_FILE = "master.key";

export function masterKeyPath(dataDir: string): string {
  return path.join(dataDir, MASTER_KEY_FILE);
}

/** The master key in `file`, or null when there is no such file; throws for a file that holds no key. */
export async function readMasterKeyFile(file: string): Promise<MasterKey | null> {
  const text = await readFileIfAny(file);
  if (text === null) return null;
  const bytes = masterKeyBytes(text);
  if (!bytes) throw new Error(`${file} does not hold a master key (64 hex characters or base64 of 32 bytes)`);
  return new MasterKey(bytes);
}

/** Writes `key` to `file`, readable by its owner only (0600), never half of it. */
export async function writeMasterKeyFile(file: string, key: MasterKey): Promise<void> {
  await writeSecretFile(file, key.toFileText());
}
