import type { ResponseConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import type { ChainClient } from "../chain/chain-client";
import type { Receipt } from "../chain/receipt";
import type { AccessControl, AccessDeclaration } from "../access";
import type { CollectionIndex } from "../collections";
import type { HeldWallets, TransactionSigner } from "../signers/signer";
import type { Operation, TransactionEngine, WriteAnswer } from "../engine";
import type { OperationList } from "../engine/operation-list";
import { AwaitingApproval, PendingWrite } from "../engine";
import { ERROR_STATUS, type ErrorCode } from "../http/errors";
import { chainField } from "../http/fields";
import { errorResponse } from "../http/openapi";
import type { DropsDeps } from "../drops/deps";
import type { MetadataDeps } from "../metadata/deps";

export interface NftDeps {
  chain: ChainClient;
  engine: TransactionEngine;
  /** Access keys: every route declares what it needs (`access`), and the router enforces it. */
  access: AccessControl;
  /** The wallets `from` names; unset = none held (404 WALLET_NOT_FOUND). */
  wallets?: HeldWallets;
  /** The collections index: collections the routes act on are registered there; unset = no index. */
  collections?: CollectionIndex;
  /** GET /nft/operations (the list) reads here; unset = that route is not served. */
  operationList?: OperationList;
  /** Drops: the allowlists the service keeps and MAX_GAS_PER_TX; unset = no allowlists (403 NOT_ALLOWLISTED). */
  drops?: DropsDeps;
  /** Hosted metadata and the tokenURI cache; unset = no metadata routes (tokenURI always read from the chain). */
  metadata?: MetadataDeps;
}

interface RouteBase<Body extends z.ZodType> {
  /** The OpenAPI path; `{name}` parameters are Koa's `:name`. */
  path: string;
  /** POST unless said otherwise. */
  method?: "post" | "put";
  /** The largest body the route reads (bodyparser's form, "10mb"); BODY_LIMIT (100 kB) unless set. */
  bodyLimit?: string;
  /** Path parameters copied into the body before it is parsed, by body field: { contractAddress: "address" }. */
  pathFields?: Record<string, string>;
  /** The operation's name: its OpenAPI operationId, and a write's name in the store and in GET /nft/operations. */
  operation: string;
  summary: string;
  description?: string;
  body: Body;
  /**
   * Parses the body instead of `body` (which still documents it), for a body too large for a schema
   * per element: as `parseBody(body, …)` would, with the same 400s.
   */
  parse?(body: unknown): z.output<Body>;
  /** The success response schema for the OpenAPI document. */
  response: z.ZodType;
  /** Error codes this operation can answer, for the OpenAPI document. */
  errors: ErrorCode[];
  /** What the route needs of an access key; the router checks it before the body is used. */
  access: AccessDeclaration;
}

/** A read: no transaction, the body is the answer. */
export interface ReadRoute<Body extends z.ZodType = z.ZodType> extends RouteBase<Body> {
  kind: "read";
  /** A read whose body names no signer (no privateKey, no from): its handler must not read `caller`. */
  signerless?: boolean;
  /** `caller`: who asks (the request key's or the wallet's address names the caller). */
  handle(input: z.output<Body>, deps: NftDeps & { caller: TransactionSigner }): Promise<Record<string, unknown>>;
}

/** What a write route asks the engine to send, or the answer when nothing needs sending. */
export type WritePlan =
  | { call: { to?: string; data: string; value?: bigint }; context: Record<string, unknown> }
  | { unchanged: Record<string, unknown>; contractAddress: string };

/**
 * A write: the route declares its call and how to read its answer from a receipt; the engine
 * does the rest (record, sign, broadcast, wait, idempotency, the operation record).
 */
export interface WriteRoute<Body extends z.ZodType = z.ZodType> extends RouteBase<Body> {
  kind: "write";
  successStatus?: number;
  /**
   * What the route checks before a large body is fingerprinted or planned (the caller owns the
   * collection, say): cheap checks that spare a stranger's request the costly work.
   */
  precheck?(input: z.output<Body>, deps: NftDeps & { signer: TransactionSigner }): Promise<void>;
  /** `dryRun`: the plan is only shown (`?dryRun=true`): it must keep nothing. */
  plan(input: z.output<Body>, deps: NftDeps & { signer: TransactionSigner; dryRun?: boolean }): Promise<WritePlan>;
  /** The route's own success fields, from the receipt and the plan's context. */
  result(receipt: Receipt, op: Operation): Record<string, unknown>;
  /** After `plan` succeeded but the write failed before or at sending: undoes what `plan` kept. */
  failed?(input: z.output<Body>, deps: NftDeps): Promise<void>;
  /** After a 200 or 202 answer (a replay's too: the first may have ended before it kept anything): what the route keeps beside the operation. */
  answered?(answer: WriteAnswer, input: z.output<Body>, deps: NftDeps): Promise<void>;
}

export type NftRoute = ReadRoute | WriteRoute;

export function defineRead<Body extends z.ZodType>(route: Omit<ReadRoute<Body>, "kind">): ReadRoute<Body> {
  return { kind: "read", ...route };
}

export function defineWrite<Body extends z.ZodType>(route: Omit<WriteRoute<Body>, "kind">): WriteRoute<Body> {
  return { kind: "write", ...route };
}

/** The Idempotency-Key request header, as documented on every write. */
export const IdempotencyHeaders = z.object({
  "idempotency-key": z.string().min(1).max(255).optional().openapi({
    description:
      "1-255 visible ASCII characters. A repeat with the same key and body sends nothing and answers what the first did (Idempotent-Replayed: true).",
    example: "order-7f3a-mint",
  }),
});

/** A write's `?dryRun=true` answer: the plan, with nothing recorded, signed or sent. */
export const DryRunPlan = z
  .object({
    status: z.literal("planned"),
    dryRun: z.literal(true),
    operation: z.string(),
    changed: z.boolean().openapi({ description: "false: the chain already has what the write asks (nothing to send)" }),
    call: z
      .object({ from: z.string(), to: z.string().nullable(), data: z.string(), value: z.string() })
      .optional()
      .openapi({ description: "The transaction it would send (when changed)" }),
    gas: z.string().optional(),
    maxFeePerGas: z.string().optional(),
    costWei: z.string().openapi({ description: "The most it would cost, in wei" }),
    approvalRequired: z.literal(true).optional().openapi({
      description: "This key's approval rule would hold the write (sent, it waits for POST /approvals/{id}/approve)",
    }),
    result: z.record(z.string(), z.unknown()).openapi({ description: "The answer's fields the plan already knows" }),
  })
  .openapi("DryRunPlan");

/** A write's query: `?chain=` and `?dryRun=`; a read's: `?chain=`. */
export function nftQuery(route: NftRoute) {
  return z.object({
    chain: chainField,
    ...(route.kind === "write"
      ? {
          dryRun: z.enum(["true", "false"]).optional().openapi({
            description: "true: plan and simulate the write (200 DryRunPlan); nothing is recorded or sent",
          }),
        }
      : {}),
  });
}

/** OpenAPI responses of a route: success, pending for writes, and every error it can answer. */
export function openApiResponses(route: NftRoute) {
  const write = route.kind === "write";
  const successStatus = write ? (route.successStatus ?? 200) : 200;
  const responses: Record<string, ResponseConfig> = {
    [String(successStatus)]: {
      description: "Success",
      content: { "application/json": { schema: route.response } },
    },
  };
  // A dry run answers 200 with its plan, whatever the write's own success status.
  if (write)
    responses["200"] =
      successStatus === 200
        ? {
            description: "Success, or the plan of a dry run (?dryRun=true)",
            content: { "application/json": { schema: z.union([route.response, DryRunPlan]) } },
          }
        : {
            description: "The plan of a dry run (?dryRun=true)",
            content: { "application/json": { schema: DryRunPlan } },
          };
  if (write) {
    responses["202"] = {
      description:
        "Sent, not yet confirmed (or the broadcast's answer was lost): follow operationId; or held by the key's approval rule (awaiting_approval)",
      content: { "application/json": { schema: z.union([PendingWrite, AwaitingApproval]) } },
    };
  }
  const codes: ErrorCode[] = ["VALIDATION_ERROR", ...route.errors];
  // What the access declaration can answer: no key (REQUIRE_ACCESS_KEY, `from`, or an always-key
  // route), a key without the scope or collection, a `from` the service does not hold, repeated failures.
  codes.push(
    route.access.unauthorizedCode ?? "UNAUTHORIZED",
    "FORBIDDEN",
    "WALLET_NOT_FOUND",
    "RATE_LIMITED",
    "SIGNER_UNAVAILABLE",
  );
  // A held write: rejected or expired, as a replay of its Idempotency-Key answers it.
  if (write) codes.push("IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_REUSED", "APPROVAL_REJECTED", "APPROVAL_EXPIRED");
  codes.push("CHAIN_UNAVAILABLE", "INTERNAL_ERROR");
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, list] of byStatus) responses[String(status)] = errorResponse(list.join(", "));
  return responses;
}
