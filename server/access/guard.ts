import type { Context, Middleware } from "koa";
import { RateLimiterMemory } from "rate-limiter-flexible";
import { ApiError, walletNotFound, type ErrorCode } from "../http/errors";
import type { Logger } from "../http/logger";
import type { AccessKeyStore } from "./access-key-store";
import { Authenticator } from "./authenticator";
import { allows, missingFor, type AccessNeed, type AccessPrincipal } from "./principal";
import type { Scope } from "./scopes";

/** What a route needs, declared once beside it; the router enforces it before the body is used. */
export interface AccessDeclaration {
  /** Unset: any valid key will do (the MCP endpoint, whose tools each go through their route's declaration). */
  scope?: Scope;
  /**
   * "always": a key is needed (wallets, keys, webhooks, withdraw). "open": the seed's open routes,
   * which need one only with REQUIRE_ACCESS_KEY=true, or when the request signs with a wallet (`from`).
   */
  key: "always" | "open";
  /** The code a missing or unknown key answers; withdraw keeps the source document's INVALID_API_KEY. */
  unauthorizedCode?: Extract<ErrorCode, "UNAUTHORIZED" | "INVALID_API_KEY">;
  /** Path parameters that name a wallet or a collection the key must be allowed. */
  params?: { wallet?: string; collection?: string };
  /** The body field that names the collection the key must be allowed (`contractAddress` on /nft). */
  bodyCollection?: string;
}

export interface AccessControlOptions {
  store: AccessKeyStore;
  /** API_KEY: the root key, holding every scope. */
  rootKey?: string;
  /** REQUIRE_ACCESS_KEY: the open routes need a key too. */
  requireAccessKey: boolean;
  logger: Logger;
  /** Failed authentications allowed from one client address per `failureWindowSeconds`, then 429. */
  maxFailures?: number;
  failureWindowSeconds?: number;
}

/**
 * Access keys at the door of every route that declares an AccessDeclaration: 401 without a valid
 * key (none, unknown, revoked, expired), 403 naming what the key lacks, 429 after repeated failures
 * from one client address. Handlers never check access themselves; they read `ctx.state.access`.
 */
export class AccessControl {
  readonly authenticator: Authenticator;
  readonly requireAccessKey: boolean;
  private readonly failures: RateLimiterMemory;
  private readonly maxFailures: number;

  constructor(readonly options: AccessControlOptions) {
    this.authenticator = new Authenticator(options.store, options.rootKey, options.logger);
    this.requireAccessKey = options.requireAccessKey;
    this.maxFailures = options.maxFailures ?? 20;
    this.failures = new RateLimiterMemory({
      points: this.maxFailures,
      duration: options.failureWindowSeconds ?? 60,
    });
  }

  get keys(): AccessKeyStore {
    return this.options.store;
  }

  /**
   * Authenticates the request for `declaration` before its body is read, and puts the principal
   * on `ctx.state.access`: undefined for an open route called without a key.
   */
  async admit(ctx: Context, declaration: AccessDeclaration): Promise<AccessPrincipal | undefined> {
    const secret = presentedKey(ctx);
    const needed = declaration.key === "always" || this.requireAccessKey;
    if (secret === undefined && !needed) return undefined;
    await this.refuseIfBlocked(ctx);
    const principal = secret === undefined ? null : await this.authenticator.authenticate(secret);
    if (!principal) {
      if (secret !== undefined) await this.failures.penalty(ctx.ip).catch(() => {});
      throw unauthorized(declaration.unauthorizedCode ?? "UNAUTHORIZED", secret !== undefined, "this route", ctx);
    }
    ctx.state.access = principal;
    this.check(ctx, { scope: declaration.scope });
    const params = declaration.params ?? {};
    this.check(ctx, {
      wallet: params.wallet ? ctx.params?.[params.wallet] : undefined,
      collection: params.collection ? ctx.params?.[params.collection] : undefined,
    });
    return principal;
  }

  /**
   * After the body is parsed, before it is used: signing with a wallet (`from`) always needs a
   * key, and the collection the body names must be within the key's limits.
   */
  checkBody(ctx: Context, declaration: AccessDeclaration, body: Record<string, unknown>): void {
    const principal = ctx.state.access as AccessPrincipal | undefined;
    if (!principal) {
      if (body.from !== undefined)
        throw unauthorized(declaration.unauthorizedCode ?? "UNAUTHORIZED", false, "signing with a wallet (from)", ctx);
      return;
    }
    const collection = declaration.bodyCollection ? body[declaration.bodyCollection] : undefined;
    if (typeof collection === "string") this.check(ctx, { collection });
  }

  /** The chain a request acts on must be within the key's chains: 403 FORBIDDEN naming it otherwise. */
  checkChain(ctx: Context, chain: { id: string; name: string }): void {
    const principal = ctx.state.access as AccessPrincipal | undefined;
    // What the key's collections are compared with from now on (`<chain>:<address>` entries).
    ctx.state.chainId = chain.id;
    const chains = principal?.chains;
    if (chains && !chains.includes(chain.id))
      throw new ApiError("FORBIDDEN", `This access key does not hold the chain ${chain.name} (${chain.id})`, [
        { path: "chain", message: `not within this key's chains` },
      ]);
  }

  /**
   * A wallet a request signs with must be within the key's limits: 404 WALLET_NOT_FOUND otherwise,
   * as for a wallet the service does not hold (prefer HeldWallets.signerFor's `usable`, which refuses
   * it before its signer is reached).
   */
  checkWallet(ctx: Context, address: string): void {
    const principal = ctx.state.access as AccessPrincipal | undefined;
    if (principal && !allows(principal, { wallet: address })) throw walletNotFound();
  }

  /** A wallet a key adds (POST /wallets) must be within its limits: 403 naming it otherwise (the caller gave its key). */
  checkNewWallet(ctx: Context, address: string): void {
    const principal = ctx.state.access as AccessPrincipal | undefined;
    if (principal && !allows(principal, { wallet: address }))
      throw new ApiError("FORBIDDEN", `This access key does not hold the wallet ${address.toLowerCase()}`, [
        { path: "wallet", message: `the wallet ${address.toLowerCase()}` },
      ]);
  }

  /** Koa middleware for a router's route: `router.get(path, access.require({...}), handler)`. */
  require(declaration: AccessDeclaration): Middleware {
    return async (ctx, next) => {
      await this.admit(ctx, declaration);
      await next();
    };
  }

  private check(ctx: Context, need: AccessNeed): void {
    const principal = ctx.state.access as AccessPrincipal | undefined;
    if (!principal) return;
    // A wallet the key may not use answers as one the service does not hold (API.md, "Every response").
    if (need.wallet && !need.scope && !allows(principal, { wallet: need.wallet })) throw walletNotFound();
    const missing = missingFor(principal, { ...need, chain: chainOf(ctx) });
    if (missing) {
      throw new ApiError("FORBIDDEN", `This access key does not hold ${missing}`, [
        {
          path: need.scope && !principal.scopes.has(need.scope) ? "scope" : need.wallet ? "wallet" : "collection",
          message: missing,
        },
      ]);
    }
  }

  private async refuseIfBlocked(ctx: Context): Promise<void> {
    const record = await this.failures.get(ctx.ip);
    if (record && record.consumedPoints >= this.maxFailures) {
      throw new ApiError("RATE_LIMITED", "Too many failed authentications from this address; retry later", undefined, {
        "Retry-After": String(Math.max(1, Math.ceil(record.msBeforeNext / 1000))),
      });
    }
  }
}

/** The chain (decimal id) the request acts on, once checkChain has seen it. */
export function chainOf(ctx: Context): string | undefined {
  return typeof ctx.state.chainId === "string" ? ctx.state.chainId : undefined;
}

/** The secret a request presents: `Authorization: Bearer`, `X-API-Key`, or the source document's `API_KEY`. */
export function presentedKey(ctx: Context): string | undefined {
  const authorization = ctx.get("Authorization").trim();
  if (/^Bearer\b/i.test(authorization)) {
    // A malformed Bearer (two tokens, none) is a key that fails, not a request without one.
    return /^Bearer +(\S+)$/i.exec(authorization)?.[1] ?? authorization;
  }
  const header = ctx.get("x-api-key").trim() || ctx.get("api_key").trim();
  return header ? header : undefined;
}

function unauthorized(
  code: "UNAUTHORIZED" | "INVALID_API_KEY",
  presented: boolean,
  what: string,
  ctx: Context,
): ApiError {
  const message = presented
    ? "The access key is unknown, revoked or expired"
    : bareAuthorization(ctx)
      ? // The key itself is never echoed: only what to add to the header.
        `Authorization holds a key without its scheme: send Authorization: Bearer <key> (add "Bearer " before the key) for ${what}`
      : `An access key is required for ${what}: send Authorization: Bearer <key> (or X-API-Key)`;
  return new ApiError(code, message, undefined, { "WWW-Authenticate": 'Bearer realm="nft-ops"' });
}

/** An Authorization header of one word, no scheme: a key sent without its "Bearer ". */
function bareAuthorization(ctx: Context): boolean {
  return /^\S+$/.test(ctx.get("Authorization").trim());
}
