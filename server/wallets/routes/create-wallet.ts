import type Router from "@koa/router";
import { computeAddress, SigningKey } from "ethers";
import { randomBytes } from "node:crypto";
import { auditActor, type AccessPrincipal } from "../../access";
import { ApiError } from "../../http/errors";
import { readJsonBody } from "../../http/json-body";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseBody } from "../../http/validation";
import { requireCurrentMasterKey } from "../master-key-check";
import { Pkcs11SignerError, signerUnavailable } from "../pkcs11-keys";
import { WalletExists, type NewWallet } from "../wallet-store";
import { createdView, MANAGE, type WalletRouteDeps } from "./deps";
import { CreatedWallet, CreateWalletRequest } from "./schemas";

type CreateInput = ReturnType<typeof CreateWalletRequest.parse>;

/**
 * POST /wallets: makes a local key, imports one (raw or from a keystore), or adopts a key of the
 * PKCS#11 token. Stored with its audit event in one transaction; 409 WALLET_EXISTS for an address
 * or a label already held. A key limited to some wallets may only add one of those, and hears of a
 * label in use only after that check.
 */
export function mountCreateWallet(router: Router, deps: WalletRouteDeps): void {
  const { access, audit, wallets } = deps;
  router.post("/wallets", access.require(MANAGE), async (ctx) => {
    const input = parseBody(CreateWalletRequest, await readJsonBody(ctx));
    // A key that may use every wallet learns of a label in use at once, before a slow keystore
    // derivation; a key limited to some, only once the wallet is known to be within its limits.
    const limited = (ctx.state.access as AccessPrincipal).wallets !== null;
    if (!limited && (await wallets.store.findByLabel(input.label))) throw exists("label");
    const { wallet, source } =
      input.kind === "pkcs11" ? await pkcs11Wallet(input, deps) : await localWallet(input, deps);
    access.checkNewWallet(ctx, wallet.address);
    const record = await wallets.db
      .transaction(async (tx) => {
        if (wallet.kind === "local") await requireCurrentMasterKey(tx, wallets.store, wallets.masterKey.key!);
        const created = await wallets.store.insert(tx, wallet);
        await audit.record(tx, auditActor(ctx), {
          action: "wallet.created",
          targetType: "wallet",
          targetId: created.address,
          details: {
            label: created.label,
            kind: created.kind,
            source,
            ...(created.keyLabel ? { keyLabel: created.keyLabel } : {}),
          },
        });
        return created;
      })
      .catch((err: unknown) => {
        throw err instanceof WalletExists ? exists(err.field) : err;
      });
    wallets.signers.forgetAll(); // a miss cached for this address or label
    ctx.status = 201;
    ctx.body = createdView(record);
  });
}

/** A local key, sealed at once: made here, or imported raw or from a keystore. */
async function localWallet(
  input: Extract<CreateInput, { kind: "local" }>,
  { wallets }: WalletRouteDeps,
): Promise<{ wallet: NewWallet; source: string }> {
  const masterKey = wallets.masterKey.key;
  if (!masterKey) {
    throw new ApiError("VALIDATION_ERROR", "This service has no WALLET_MASTER_KEY: it cannot hold local keys", [
      { path: "kind", message: "local wallets need WALLET_MASTER_KEY" },
    ]);
  }
  const source = input.keystore ? "keystore" : input.privateKey ? "privateKey" : "generated";
  const key = input.keystore
    ? await wallets.keystores.decrypt(input.keystore, input.password!)
    : input.privateKey
      ? Buffer.from(input.privateKey.replace(/^0x/, ""), "hex")
      : randomBytes(32);
  try {
    let address: string;
    try {
      address = computeAddress(new SigningKey(key).publicKey);
    } catch {
      throw new ApiError("VALIDATION_ERROR", "privateKey is not a valid secp256k1 key", [
        { path: "privateKey", message: "not a valid secp256k1 private key" },
      ]);
    }
    return {
      wallet: { address, label: input.label, kind: "local", sealedKey: masterKey.sealWalletKey(address, key) },
      source,
    };
  } finally {
    key.fill(0);
  }
}

/** A key already in the PKCS#11 token, named by its label: its address read from its public key. */
async function pkcs11Wallet(
  input: Extract<CreateInput, { kind: "pkcs11" }>,
  { wallets }: WalletRouteDeps,
): Promise<{ wallet: NewWallet; source: string }> {
  if (!wallets.pkcs11.configured) {
    throw new ApiError(
      "VALIDATION_ERROR",
      "This service has no PKCS#11 token: set PKCS11_MODULE, PKCS11_TOKEN_LABEL and PKCS11_PIN",
      [{ path: "kind", message: "pkcs11 wallets need PKCS11_MODULE, PKCS11_TOKEN_LABEL and PKCS11_PIN" }],
    );
  }
  try {
    const signer = await wallets.pkcs11.signer(input.keyLabel);
    return {
      wallet: { address: signer.address, label: input.label, kind: "pkcs11", keyLabel: input.keyLabel },
      source: "pkcs11",
    };
  } catch (err) {
    if (!(err instanceof Pkcs11SignerError)) throw err;
    if (err.reason === "KEY_NOT_FOUND" || err.reason === "KEY_AMBIGUOUS" || err.reason === "KEY_UNSUPPORTED")
      throw new ApiError("VALIDATION_ERROR", `keyLabel: ${err.message}`, [{ path: "keyLabel", message: err.message }]);
    // The token itself: absent, logged out, or its module, label or PIN settings (never the PIN).
    throw signerUnavailable(err);
  }
}

function exists(field: "address" | "label"): ApiError {
  return new ApiError(
    "WALLET_EXISTS",
    field === "address" ? "A wallet for this address is already held" : "A wallet with this label is already held",
    [{ path: field === "address" ? "address" : "label", message: "already held" }],
  );
}

export function registerCreateWalletOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/wallets",
    operationId: "createWallet",
    tags: ["wallets"],
    summary: "Hold a wallet: make a key, import one (privateKey or keystore + password), or use a PKCS#11 token's key",
    description:
      "Scope wallets:manage. A local key is sealed at once with AES-256-GCM under WALLET_MASTER_KEY; a pkcs11 key never leaves its token. No key is ever returned.",
    security: [{ AccessKey: [] }],
    request: { body: { required: true, content: { "application/json": { schema: CreateWalletRequest } } } },
    responses: {
      201: { description: "Held", content: { "application/json": { schema: CreatedWallet } } },
      400: errorResponse("VALIDATION_ERROR (a wrong keystore password too)"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      409: errorResponse("WALLET_EXISTS"),
      429: errorResponse("RATE_LIMITED"),
      503: errorResponse("SIGNER_UNAVAILABLE: the PKCS#11 token is absent or logged out"),
    },
  });
}
