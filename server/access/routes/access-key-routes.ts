import type Router from "@koa/router";
import { getAddress } from "ethers";
import { z } from "zod";
import type { SqlDriver } from "../../db";
import { ApiError } from "../../http/errors";
import { readJsonBody } from "../../http/json-body";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseBody, parseInput } from "../../http/validation";
import type { AccessKeyRecord } from "../access-key-store";
import { auditActor, type AuditLog } from "../audit";
import type { AccessControl } from "../guard";
import { pageOf, PageQuery, pageRequest } from "../../http/paging";
import { collectionEntry, grantExceeds, type AccessPrincipal } from "../principal";
import { ruleLooser } from "../approval-rule";
import { accessKeyHash, newAccessKeySecret } from "../secrets";
import { AccessKeyParams, AccessKeyView, CreateAccessKeyRequest, CreatedAccessKey } from "./schemas";

export interface AccessRouteDeps {
  access: AccessControl;
  audit: AuditLog;
  db: SqlDriver;
  /** A configured chain's decimal id from its id or name (404 CHAIN_NOT_FOUND otherwise); unset = ids as given. */
  chainIdOf?: (chain: string | number) => string;
}

const MANAGE = { scope: "access-keys:manage", key: "always" } as const;

/** POST /access-keys, GET /access-keys, DELETE /access-keys/{id}. */
export function mountAccessKeyRoutes(router: Router, deps: AccessRouteDeps): void {
  const { access, audit, db } = deps;

  router.post("/access-keys", access.require(MANAGE), async (ctx) => {
    const input = parseBody(CreateAccessKeyRequest, await readJsonBody(ctx));
    const granter = ctx.state.access as AccessPrincipal;
    const grant = {
      scopes: new Set(input.scopes),
      wallets: input.wallets ? unique(input.wallets) : null,
      collections: input.collections ? [...new Set(input.collections.map((c) => collectionLimit(c, deps)))] : null,
      chains: input.chains ? [...new Set(input.chains.map((c) => deps.chainIdOf?.(c) ?? String(c)))] : null,
      expiresAt: input.expiresAt ? new Date(input.expiresAt) : null,
    };
    if (grant.expiresAt && grant.expiresAt.getTime() <= Date.now()) {
      throw new ApiError("VALIDATION_ERROR", "expiresAt must be in the future", [
        { path: "expiresAt", message: "must be in the future" },
      ]);
    }
    const beyond = grantExceeds(granter, grant);
    if (beyond) throw new ApiError("FORBIDDEN", `A key can grant only what it holds: this one does not hold ${beyond}`);
    // A key made by a key carries at least its maker's approval rule: none given inherits it.
    const approval = input.approval ?? granter.approval ?? null;
    const looser = ruleLooser(granter.approval, approval);
    if (looser)
      throw new ApiError("FORBIDDEN", `A key can grant only what it holds: this one cannot grant ${looser}`, [
        { path: "approval", message: looser },
      ]);
    const secret = newAccessKeySecret();
    const record = await db.transaction(async (tx) => {
      // Revoked meanwhile: the key it would make would outlive it.
      if (granter.keyId !== null && !(await access.keys.holdLive(tx, granter.keyId)))
        throw new ApiError("UNAUTHORIZED", "The access key is unknown, revoked or expired", undefined, {
          "WWW-Authenticate": 'Bearer realm="nft-ops"',
        });
      const created = await access.keys.insert(
        tx,
        {
          name: input.name,
          scopes: [...grant.scopes],
          wallets: grant.wallets,
          collections: grant.collections,
          chains: grant.chains,
          expiresAt: grant.expiresAt,
          createdBy: granter.keyId,
          approval,
        },
        accessKeyHash(secret),
      );
      await audit.record(tx, auditActor(ctx), {
        action: "access-key.created",
        targetType: "access-key",
        targetId: created.id,
        details: {
          name: created.name,
          scopes: created.scopes,
          wallets: created.wallets,
          collections: created.collections,
          ...(created.chains ? { chains: created.chains } : {}),
          expiresAt: created.expiresAt,
          ...(created.approval ? { approval: created.approval } : {}),
        },
      });
      return created;
    });
    ctx.status = 201;
    ctx.body = { ...viewOf(record), key: secret };
  });

  router.get("/access-keys", access.require(MANAGE), async (ctx) => {
    const page = pageRequest(parseInput(PageQuery, ctx.query));
    const principal = ctx.state.access as AccessPrincipal;
    const { items, cursor } = pageOf(await access.keys.list(principal.keyId, page), page.limit, (k) => k.position);
    ctx.body = { accessKeys: items.map(viewOf), ...(cursor ? { cursor } : {}) };
  });

  router.delete("/access-keys/:id", access.require(MANAGE), async (ctx) => {
    const { id } = parseInput(AccessKeyParams, ctx.params);
    const principal = ctx.state.access as AccessPrincipal;
    // A key revokes only the keys it made, and theirs; any other is one it cannot see: 404 as unknown.
    const visible = principal.keyId === null || (await access.keys.isDescendant(principal.keyId, id));
    if (!visible) throw notFound();
    await db.transaction(async (tx) => {
      const [revoked, ...descendants] = await access.keys.revoke(tx, id);
      if (!revoked) throw notFound();
      const actor = auditActor(ctx);
      await audit.record(tx, actor, {
        action: "access-key.revoked",
        targetType: "access-key",
        targetId: id,
        ...(descendants.length > 0 ? { details: { alsoRevoked: descendants } } : {}),
      });
      for (const descendant of descendants) {
        await audit.record(tx, actor, {
          action: "access-key.revoked",
          targetType: "access-key",
          targetId: descendant,
          details: { revokedWith: id },
        });
      }
    });
    access.authenticator.forgetAll();
    ctx.status = 204;
  });
}

const notFound = () => new ApiError("NOT_FOUND", "No live access key has this id");

/** A `collections` entry as the store keeps it: `0x…` (every chain) or `<chain id>:0x…`, lower case. */
function collectionLimit(entry: string, deps: AccessRouteDeps): string {
  const { chain, address } = collectionEntry(entry);
  const lower = getAddress(address.toLowerCase()).toLowerCase();
  if (chain === undefined) return lower;
  const id = deps.chainIdOf ? deps.chainIdOf(chain) : chain;
  return `${id}:${lower}`;
}

/** A stored `collections` entry as answered: the address checksummed, its chain (if any) before it. */
function collectionView(entry: string): string {
  const { chain, address } = collectionEntry(entry);
  return chain === undefined ? getAddress(address) : `${chain}:${getAddress(address)}`;
}

function unique(addresses: string[]): string[] {
  return [...new Set(addresses.map((a) => getAddress(a).toLowerCase()))];
}

function viewOf(key: AccessKeyRecord) {
  return {
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    ...(key.wallets ? { wallets: key.wallets.map((a) => getAddress(a)) } : {}),
    ...(key.collections ? { collections: key.collections.map(collectionView) } : {}),
    ...(key.chains ? { chains: key.chains } : {}),
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    createdBy: key.createdBy,
    ...(key.approval ? { approval: key.approval } : {}),
  };
}

const security = [{ AccessKey: [] }];
const denied = {
  401: errorResponse("UNAUTHORIZED"),
  403: errorResponse("FORBIDDEN"),
  429: errorResponse("RATE_LIMITED"),
};

export function registerAccessKeyOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/access-keys",
    operationId: "createAccessKey",
    tags: ["access"],
    summary: "Make an access key (scope access-keys:manage); its secret is shown this once",
    security,
    request: { body: { required: true, content: { "application/json": { schema: CreateAccessKeyRequest } } } },
    responses: {
      201: { description: "Created", content: { "application/json": { schema: CreatedAccessKey } } },
      400: errorResponse("VALIDATION_ERROR"),
      ...denied,
    },
  });
  registry.registerPath({
    method: "get",
    path: "/access-keys",
    operationId: "listAccessKeys",
    tags: ["access"],
    summary: "List live access keys, without secrets, newest first: those this key made and theirs (the root key: all)",
    security,
    request: { query: PageQuery },
    responses: {
      200: {
        description: "A page of keys; `cursor` fetches the next",
        content: {
          "application/json": {
            schema: z.object({ accessKeys: z.array(AccessKeyView), cursor: z.string().optional() }),
          },
        },
      },
      400: errorResponse("VALIDATION_ERROR"),
      ...denied,
    },
  });
  registry.registerPath({
    method: "delete",
    path: "/access-keys/{id}",
    operationId: "revokeAccessKey",
    tags: ["access"],
    summary:
      "Revoke an access key this key made (or one made by those; the root key: any), and every key it made and theirs, on every instance within 1 s",
    security,
    request: { params: AccessKeyParams },
    responses: { 204: { description: "Revoked" }, 404: errorResponse("NOT_FOUND"), ...denied },
  });
}
