/**
 * What the wallet tests share: a service holding wallets (a master key, a SoftHSM2 token with a
 * secp256k1 key made in it), an HTTP client that sends the root key, and scans for secrets in
 * files and dumps. Each test file starts its own node and service from these.
 */
import { createCipheriv, pbkdf2Sync, randomBytes, randomUUID } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { keccak256, Wallet, type JsonRpcProvider } from "ethers";
import { Pkcs11Token } from "../../server/signers/pkcs11";
import { ApiClient, ServiceProcess, TEST_API_KEY, usedSecrets, type ApiResponse, type JsonBody } from "../api/harness";
import { createSoftHsmToken, type SoftHsmToken } from "../support/softhsm";

export const ROOT_AUTH = { Authorization: `Bearer ${TEST_API_KEY}` };

/** A new master key (hex), remembered for the secret scans. */
export function newMasterKey(): string {
  const key = randomBytes(32).toString("hex");
  usedSecrets.add(key);
  return key;
}

/** A SoftHSM2 token holding one secp256k1 key pair, made in the token; its PIN is remembered for the scans. */
export async function tokenWithKey(keyLabel: string): Promise<{ hsm: SoftHsmToken; keyAddress: string }> {
  const hsm = createSoftHsmToken({ tokenLabel: "wallets-test", pin: `pin-${randomBytes(6).toString("hex")}` });
  usedSecrets.add(hsm.pin);
  const restore = hsm.useInThisProcess();
  try {
    const token = await Pkcs11Token.open({ modulePath: hsm.modulePath, tokenLabel: hsm.tokenLabel, pin: hsm.pin });
    try {
      return { hsm, keyAddress: (await token.generateKey(keyLabel)).address };
    } finally {
      await token.close();
    }
  } finally {
    restore();
  }
}

/** The service's environment for holding wallets: the master key and the token's settings. */
export function walletEnv(masterKey: string | undefined, hsm: SoftHsmToken, extra: Record<string, string> = {}) {
  return {
    ...(masterKey ? { WALLET_MASTER_KEY: masterKey } : {}),
    PKCS11_MODULE: hsm.modulePath,
    PKCS11_TOKEN_LABEL: hsm.tokenLabel,
    PKCS11_PIN: hsm.pin,
    ...hsm.env,
    ...extra,
  };
}

/** An ApiClient that sends an access key (the root key unless told) with every request. */
export class KeyedClient {
  constructor(
    readonly api: ApiClient,
    private readonly headers: Record<string, string> = ROOT_AUTH,
  ) {}

  as(key: string): KeyedClient {
    return new KeyedClient(this.api, { Authorization: `Bearer ${key}` });
  }

  post(pathname: string, json: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    return this.api.request("POST", pathname, { json, headers: { ...this.headers, ...headers } });
  }

  get(pathname: string): Promise<ApiResponse> {
    return this.api.request("GET", pathname, { headers: this.headers });
  }

  patch(pathname: string, json: unknown): Promise<ApiResponse> {
    return this.api.request("PATCH", pathname, { json, headers: this.headers });
  }

  delete(pathname: string): Promise<ApiResponse> {
    return this.api.request("DELETE", pathname, { headers: this.headers });
  }

  /** POST /wallets, expecting 201; the body. */
  async createWallet(body: Record<string, unknown>): Promise<JsonBody> {
    const res = await this.post("/wallets", body);
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }
}

/** A fresh key, remembered for the scans, for importing. */
export function importableKey(): Wallet {
  const wallet = Wallet.createRandom();
  usedSecrets.add(wallet.privateKey);
  return new Wallet(wallet.privateKey);
}

export async function fund(provider: JsonRpcProvider, address: string, wei = 100n * 10n ** 18n): Promise<void> {
  await provider.send("hardhat_setBalance", [address, `0x${wei.toString(16)}`]);
}

/** Every secret of the tests (keys, master keys, PINs) found in the files under `dir`: as text (hex, any case) or as raw bytes. */
export function secretsInFiles(dir: string): string[] {
  const found: string[] = [];
  for (const file of filesUnder(dir)) {
    const bytes = readFileSync(file);
    const text = bytes.toString("latin1").toLowerCase();
    for (const secret of usedSecrets) {
      const bare = secret.toLowerCase().replace(/^0x/, "");
      const raw = /^[0-9a-f]{64}$/.test(bare) ? Buffer.from(bare, "hex") : null;
      if (text.includes(bare) || (raw && bytes.includes(raw))) found.push(`${secret.slice(0, 8)}… in ${file}`);
    }
  }
  return found;
}

/** Every secret of the tests found in `text` (a dump, a log): hex in any case. */
export function secretsInText(text: string): string[] {
  const haystack = text.toLowerCase();
  return [...usedSecrets]
    .filter((secret) => haystack.includes(secret.toLowerCase().replace(/^0x/, "")))
    .map((secret) => `${secret.slice(0, 8)}…`);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

/** npm start's command on `rpcUrl` with wallets (the harness's ServiceProcess), on `dataDir`. */
export function startWalletService(
  rpcUrl: string,
  dataDir: string,
  env: Record<string, string>,
): Promise<ServiceProcess> {
  return ServiceProcess.start({ rpcUrl, env: { DATA_DIR: dataDir, ...env } });
}

/** A Web3 Secret Storage v3 keystore of `wallet` derived with pbkdf2 (hmac-sha256), as ethers reads it. */
export function pbkdf2Keystore(wallet: Wallet, password: string, rounds: number): JsonBody {
  const [salt, iv] = [randomBytes(32), randomBytes(16)];
  const derived = pbkdf2Sync(Buffer.from(password.normalize("NFKD")), salt, rounds, 32, "sha256");
  const cipher = createCipheriv("aes-128-ctr", derived.subarray(0, 16), iv);
  const ciphertext = Buffer.concat([cipher.update(Buffer.from(wallet.privateKey.slice(2), "hex")), cipher.final()]);
  return {
    version: 3,
    id: randomUUID(),
    address: wallet.address.slice(2).toLowerCase(),
    crypto: {
      cipher: "aes-128-ctr",
      cipherparams: { iv: iv.toString("hex") },
      ciphertext: ciphertext.toString("hex"),
      kdf: "pbkdf2",
      kdfparams: { c: rounds, dklen: 32, prf: "hmac-sha256", salt: salt.toString("hex") },
      mac: keccak256(Buffer.concat([derived.subarray(16, 32), ciphertext])).slice(2),
    },
  };
}
