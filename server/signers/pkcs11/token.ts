import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { computeAddress, hexlify } from "ethers";
import { Pkcs11SignerError, returnValueOf } from "./errors";
import { acquireModule, releaseModule, type LoadedModule } from "./native-module";
import { SECP256K1_EC_PARAMS, uncompressedPoint } from "./secp256k1";
import { SessionPool } from "./session-pool";

type Handle = Buffer;

export interface Pkcs11TokenOptions {
  /** Path of the PKCS#11 module (shared library), e.g. /usr/lib/softhsm/libsofthsm2.so. */
  modulePath: string;
  /** CKA_LABEL of the token (its label as `softhsm2-util --show-slots` or `pkcs11-tool -L` print it). */
  tokenLabel: string;
  /** The user PIN; used to log in and then forgotten (only a salted digest stays, see below). */
  pin: string;
  /** Sessions opened on the token: how many signatures can be under way at once. Default 4. */
  sessions?: number;
}

/** A secp256k1 key pair in the token: its public half read out, its private half only a handle. */
export class Pkcs11Key {
  constructor(
    readonly label: string,
    /** Checksummed Ethereum address of the public key. */
    readonly address: string,
    /** 0x04 || x || y. */
    readonly publicKey: string,
    /** CKA_SENSITIVE of the private key: its value never leaves the token in the clear. */
    readonly sensitive: boolean,
    /** CKA_EXTRACTABLE of the private key: whether it can be exported at all (wrapped). */
    readonly extractable: boolean,
    /** The private key's object handle in this process's sessions. */
    readonly handle: Handle,
  ) {}
}

export const DEFAULT_SESSIONS = 4;

/** Session states of a logged-in user (PKCS#11 CK_STATE; pkcs11js exports no constants for them). */
const CKS_RO_USER_FUNCTIONS = 1;
const CKS_RW_USER_FUNCTIONS = 3;

/**
 * Logins held in this process, per token: PKCS#11 logs in the application, not a session, so a
 * second open of a logged-in token cannot ask the token about its PIN (it answers "already logged
 * in"). The first open's PIN is kept as a salted digest to check later opens against.
 */
const logins = new Map<string, { users: number; pinDigest: Buffer }>();
const PIN_SALT = randomBytes(32);

function pinDigest(pin: string): Buffer {
  return createHash("sha256").update(PIN_SALT).update(pin, "utf8").digest();
}

/**
 * A PKCS#11 token opened and logged in once for the process: a few sessions shared by every key
 * in it, signing with CKM_ECDSA on digests computed here. The private keys never leave the token.
 */
export class Pkcs11Token {
  private generating: Promise<unknown> = Promise.resolve();
  private closed?: Promise<void>;

  private constructor(
    private readonly module: LoadedModule,
    private readonly loginKey: string,
    private readonly pool: SessionPool<Handle>,
    readonly label: string,
  ) {}

  static async open(options: Pkcs11TokenOptions): Promise<Pkcs11Token> {
    const { modulePath, tokenLabel, pin } = options;
    const sessionCount = options.sessions ?? DEFAULT_SESSIONS;
    if (!Number.isInteger(sessionCount) || sessionCount < 1)
      throw new RangeError("sessions must be a positive integer");
    const module = await acquireModule(modulePath);
    const { pkcs11, lib } = module;
    const sessions: Handle[] = [];
    let loginKey: string | undefined;
    try {
      const slot = findSlot(module, tokenLabel);
      for (let i = 0; i < sessionCount; i++) {
        sessions.push(pkcs11.C_OpenSession(slot, lib.CKF_SERIAL_SESSION | lib.CKF_RW_SESSION));
      }
      loginKey = `${module.realPath}\0${slot.toString("hex")}`;
      logIn(module, sessions[0], loginKey, tokenLabel, pin);
      return new Pkcs11Token(module, loginKey, new SessionPool(sessions, `PKCS#11 token "${tokenLabel}"`), tokenLabel);
    } catch (err) {
      for (const session of sessions) closeQuietly(() => pkcs11.C_CloseSession(session));
      await releaseModule(module);
      if (err instanceof Pkcs11SignerError) throw err;
      throw new Pkcs11SignerError(
        "TOKEN_NOT_FOUND",
        `cannot open a session on PKCS#11 token "${tokenLabel}"`,
        returnValueOf(err),
      );
    }
  }

  /** The secp256k1 key whose private key has CKA_LABEL `keyLabel`, with its address. */
  findKey(keyLabel: string): Promise<Pkcs11Key> {
    return this.pool.use((session) => this.readKey(session, keyLabel));
  }

  /**
   * Makes a new secp256k1 key pair inside the token under `keyLabel`: token objects (kept across
   * restarts), the private key sensitive and not extractable, so no one can ever read it out.
   */
  generateKey(keyLabel: string): Promise<Pkcs11Key> {
    // One at a time, so two callers cannot both find a label free and both use it.
    const generated = this.generating.then(() => this.pool.use((session) => this.generateIn(session, keyLabel)));
    this.generating = generated.catch(() => undefined);
    return generated;
  }

  /** CKM_ECDSA over a 32-byte digest: r || s as the token returns them (any s, no recovery id). */
  signDigest(key: Pkcs11Key, digest: Uint8Array): Promise<Buffer> {
    const { pkcs11, lib } = this.module;
    return this.pool.use(async (session) => {
      try {
        pkcs11.C_SignInit(session, { mechanism: lib.CKM_ECDSA }, key.handle);
        // Async: the token works on a libuv thread while the event loop goes on.
        return await pkcs11.C_SignAsync(session, Buffer.from(digest), Buffer.alloc(64));
      } catch (err) {
        const returnValue = returnValueOf(err);
        if (returnValue === "CKR_KEY_HANDLE_INVALID" || returnValue === "CKR_OBJECT_HANDLE_INVALID") {
          throw new Pkcs11SignerError(
            "KEY_NOT_FOUND",
            `key "${key.label}" is no longer in PKCS#11 token "${this.label}"`,
            returnValue,
          );
        }
        throw new Pkcs11SignerError(
          "SIGN_FAILED",
          `PKCS#11 token "${this.label}" did not sign with key "${key.label}"`,
          returnValue,
        );
      }
    });
  }

  /**
   * Whether the token is present and this process logged in to it. A token taken away (and even one
   * put back) fails C_GetTokenInfo on its slot, and its sessions no longer see its private keys:
   * only a new open (a new login) reaches them again.
   */
  available(): Promise<boolean> {
    const { pkcs11 } = this.module;
    return this.pool
      .use((session) => {
        const info = pkcs11.C_GetSessionInfo(session);
        if (info.state !== CKS_RO_USER_FUNCTIONS && info.state !== CKS_RW_USER_FUNCTIONS) return false;
        pkcs11.C_GetTokenInfo(info.slotID);
        return true;
      })
      .catch(() => false);
  }

  /** Waits for signatures under way, logs out (when no other open of the token remains) and closes the sessions. */
  close(): Promise<void> {
    this.closed ??= this.shutDown();
    return this.closed;
  }

  private async shutDown(): Promise<void> {
    const { pkcs11 } = this.module;
    const sessions = await this.pool.drain();
    const login = logins.get(this.loginKey);
    if (login && --login.users === 0) {
      logins.delete(this.loginKey);
      if (sessions.length > 0) closeQuietly(() => pkcs11.C_Logout(sessions[0]));
    }
    for (const session of sessions) closeQuietly(() => pkcs11.C_CloseSession(session));
    await releaseModule(this.module);
  }

  private readKey(session: Handle, keyLabel: string): Pkcs11Key {
    const { lib } = this.module;
    const privateKeys = this.findObjects(session, [
      { type: lib.CKA_CLASS, value: lib.CKO_PRIVATE_KEY },
      { type: lib.CKA_LABEL, value: keyLabel },
    ]);
    if (privateKeys.length === 0) {
      throw new Pkcs11SignerError(
        "KEY_NOT_FOUND",
        `no private key labelled "${keyLabel}" in PKCS#11 token "${this.label}"`,
      );
    }
    if (privateKeys.length > 1) {
      throw new Pkcs11SignerError(
        "KEY_AMBIGUOUS",
        `${privateKeys.length} private keys are labelled "${keyLabel}" in PKCS#11 token "${this.label}": relabel all but one`,
      );
    }
    return this.describeKey(session, keyLabel, privateKeys[0]);
  }

  private describeKey(session: Handle, keyLabel: string, privateKey: Handle): Pkcs11Key {
    const { lib } = this.module;
    const [keyType, id, sensitive, extractable] = this.attributes(session, privateKey, [
      lib.CKA_KEY_TYPE,
      lib.CKA_ID,
      lib.CKA_SENSITIVE,
      lib.CKA_EXTRACTABLE,
    ]);
    if (readUlong(keyType) !== lib.CKK_EC) {
      throw new Pkcs11SignerError("KEY_UNSUPPORTED", `key "${keyLabel}" is not an elliptic-curve key`);
    }
    // The public half is a separate object: paired by CKA_ID when the key has one, else by label.
    let publicKeys =
      id.length > 0
        ? this.findObjects(session, [
            { type: lib.CKA_CLASS, value: lib.CKO_PUBLIC_KEY },
            { type: lib.CKA_ID, value: id },
          ])
        : [];
    if (publicKeys.length === 0) {
      publicKeys = this.findObjects(session, [
        { type: lib.CKA_CLASS, value: lib.CKO_PUBLIC_KEY },
        { type: lib.CKA_LABEL, value: keyLabel },
      ]);
    }
    if (publicKeys.length !== 1) {
      throw new Pkcs11SignerError(
        publicKeys.length === 0 ? "KEY_UNSUPPORTED" : "KEY_AMBIGUOUS",
        `key "${keyLabel}" has ${publicKeys.length} public key objects in PKCS#11 token "${this.label}" ` +
          "(the signer reads the address from exactly one, paired by CKA_ID or CKA_LABEL)",
      );
    }
    const [ecParams, ecPoint] = this.attributes(session, publicKeys[0], [lib.CKA_EC_PARAMS, lib.CKA_EC_POINT]);
    if (!ecParams.equals(SECP256K1_EC_PARAMS)) {
      throw new Pkcs11SignerError(
        "KEY_UNSUPPORTED",
        `key "${keyLabel}" is not on secp256k1 (CKA_EC_PARAMS ${hexlify(ecParams)})`,
      );
    }
    const point = hexlify(uncompressedPoint(ecPoint));
    return new Pkcs11Key(keyLabel, computeAddress(point), point, sensitive[0] === 1, extractable[0] === 1, privateKey);
  }

  private async generateIn(session: Handle, keyLabel: string): Promise<Pkcs11Key> {
    const { pkcs11, lib } = this.module;
    const taken = this.findObjects(session, [{ type: lib.CKA_LABEL, value: keyLabel }]);
    if (taken.length > 0) {
      throw new Pkcs11SignerError(
        "KEY_EXISTS",
        `PKCS#11 token "${this.label}" already has a key labelled "${keyLabel}"`,
      );
    }
    const id = randomBytes(16);
    const common = [
      { type: lib.CKA_KEY_TYPE, value: lib.CKK_EC },
      { type: lib.CKA_TOKEN, value: true },
      { type: lib.CKA_LABEL, value: keyLabel },
      { type: lib.CKA_ID, value: id },
    ];
    let keys: { privateKey: Handle; publicKey: Handle };
    try {
      keys = await pkcs11.C_GenerateKeyPairAsync(
        session,
        { mechanism: lib.CKM_EC_KEY_PAIR_GEN },
        [
          ...common,
          { type: lib.CKA_CLASS, value: lib.CKO_PUBLIC_KEY },
          { type: lib.CKA_EC_PARAMS, value: Buffer.from(SECP256K1_EC_PARAMS) },
          { type: lib.CKA_VERIFY, value: true },
          { type: lib.CKA_PRIVATE, value: false },
        ],
        [
          ...common,
          { type: lib.CKA_CLASS, value: lib.CKO_PRIVATE_KEY },
          { type: lib.CKA_SIGN, value: true },
          { type: lib.CKA_PRIVATE, value: true },
          { type: lib.CKA_SENSITIVE, value: true },
          { type: lib.CKA_EXTRACTABLE, value: false },
        ],
      );
    } catch (err) {
      throw new Pkcs11SignerError(
        "KEY_UNSUPPORTED",
        `PKCS#11 token "${this.label}" did not generate a secp256k1 key pair`,
        returnValueOf(err),
      );
    }
    return this.describeKey(session, keyLabel, keys.privateKey);
  }

  private findObjects(session: Handle, template: Array<{ type: number; value: number | string | Buffer }>): Handle[] {
    const { pkcs11 } = this.module;
    pkcs11.C_FindObjectsInit(session, template);
    try {
      const found: Handle[] = [];
      for (;;) {
        const batch = pkcs11.C_FindObjects(session, 16);
        if (batch.length === 0) return found;
        found.push(...batch);
      }
    } finally {
      pkcs11.C_FindObjectsFinal(session);
    }
  }

  private attributes(session: Handle, object: Handle, types: number[]): Buffer[] {
    const values = this.module.pkcs11.C_GetAttributeValue(
      session,
      object,
      types.map((type) => ({ type })),
    );
    return values.map((attribute) => attribute.value);
  }
}

function findSlot({ pkcs11, path }: LoadedModule, tokenLabel: string): Handle {
  const slots = pkcs11.C_GetSlotList(true);
  const labels = slots.map((slot) => pkcs11.C_GetTokenInfo(slot).label.trimEnd());
  const matching = slots.filter((_, i) => labels[i] === tokenLabel);
  if (matching.length === 1) return matching[0];
  if (matching.length > 1) {
    throw new Pkcs11SignerError(
      "TOKEN_NOT_FOUND",
      `${matching.length} tokens are labelled "${tokenLabel}" in PKCS#11 module ${JSON.stringify(path)}`,
    );
  }
  const present = labels.filter((label) => label !== "");
  throw new Pkcs11SignerError(
    "TOKEN_NOT_FOUND",
    `no token labelled "${tokenLabel}" in PKCS#11 module ${JSON.stringify(path)} ` +
      (present.length > 0 ? `(tokens present: ${present.map((l) => `"${l}"`).join(", ")})` : "(no initialized token)"),
  );
}

function logIn(
  { pkcs11, lib }: LoadedModule,
  session: Handle,
  loginKey: string,
  tokenLabel: string,
  pin: string,
): void {
  const digest = pinDigest(pin);
  const held = logins.get(loginKey);
  if (held) {
    if (!timingSafeEqual(held.pinDigest, digest)) {
      throw new Pkcs11SignerError("LOGIN_FAILED", `wrong PIN for PKCS#11 token "${tokenLabel}"`);
    }
    held.users += 1;
    return;
  }
  try {
    pkcs11.C_Login(session, lib.CKU_USER, pin);
  } catch (err) {
    const returnValue = returnValueOf(err);
    const why =
      returnValue === "CKR_PIN_INCORRECT" || returnValue === "CKR_PIN_LEN_RANGE"
        ? "wrong PIN"
        : returnValue === "CKR_PIN_LOCKED"
          ? "its PIN is locked (too many wrong PINs)"
          : returnValue === "CKR_USER_ALREADY_LOGGED_IN"
            ? "it is already logged in by other code in this process, so the PIN cannot be checked"
            : "login refused";
    throw new Pkcs11SignerError("LOGIN_FAILED", `${why} for PKCS#11 token "${tokenLabel}"`, returnValue);
  }
  logins.set(loginKey, { users: 1, pinDigest: digest });
}

/** A CK_ULONG attribute (native byte order, 4 or 8 bytes). */
function readUlong(value: Buffer): number {
  return value.length >= 8 ? Number(value.readBigUInt64LE(0)) : value.readUInt32LE(0);
}

function closeQuietly(close: () => void): void {
  try {
    close();
  } catch {
    // Closing what the token already dropped: nothing left to do.
  }
}
