import type { Context } from "koa";
import { z } from "zod";
import type { ChainClient, WriteOutcome } from "../chain/chain-client";
import type { PooledSigner } from "../chain/signer-pool";
import type { ResponseConfig } from "@asteasolutions/zod-to-openapi";
import { errorResponse } from "../http/openapi";
import { ERROR_STATUS, type ErrorCode } from "../http/errors";
import { PendingWrite, WriteFields } from "./fields";

export interface NftDeps {
  chain: ChainClient;
  /** The key /nft/withdraw requires; unset refuses every withdrawal. */
  apiKey?: string;
}

export interface NftResult {
  status?: number;
  body: Record<string, unknown>;
}

/** One /nft operation: its schemas, its documentation and its handler, in one place. */
export interface NftRoute<Body extends z.ZodType = z.ZodType> {
  path: string;
  summary: string;
  description?: string;
  body: Body;
  /** The 2xx response schema for the OpenAPI document. */
  response: z.ZodType;
  successStatus?: number;
  /** Error codes this operation can answer, for the OpenAPI document. */
  errors: ErrorCode[];
  /** Whether the operation needs the API_KEY header. */
  apiKey?: boolean;
  /** Whether the operation sends a transaction (it may then answer 202 pending). */
  writes?: boolean;
  handle(input: z.output<Body>, deps: NftDeps, ctx: Context): Promise<NftResult>;
}

export function defineRoute<Body extends z.ZodType>(route: NftRoute<Body>): NftRoute<Body> {
  return route;
}

/** The body of a write: the common fields when confirmed, or the pending shape (202). */
export function writeResult(
  outcome: WriteOutcome,
  signer: PooledSigner,
  contractAddress: string,
  extra: (receipt: Extract<WriteOutcome, { status: "confirmed" }>["receipt"]) => Record<string, unknown>,
  successStatus = 200,
): NftResult {
  if (outcome.status === "pending") {
    return {
      status: 202,
      body: { status: "pending", transactionHash: outcome.transactionHash, from: signer.address, contractAddress },
    };
  }
  const { receipt } = outcome;
  return {
    status: successStatus,
    body: {
      status: "confirmed",
      transactionHash: receipt.hash,
      blockNumber: receipt.blockNumber,
      from: signer.address,
      contractAddress,
      gasUsed: receipt.gasUsed.toString(),
      ...extra(receipt),
    },
  };
}

export const writeResponseSchema = (extra: z.ZodRawShape) => WriteFields.extend(extra);

/** OpenAPI responses of a route: success, pending for writes, and every error it can answer. */
export function openApiResponses(route: NftRoute) {
  const responses: Record<string, ResponseConfig> = {
    [String(route.successStatus ?? 200)]: {
      description: "Success",
      content: { "application/json": { schema: route.response } },
    },
  };
  if (route.writes)
    responses["202"] = {
      description: "Sent, not yet confirmed",
      content: { "application/json": { schema: PendingWrite } },
    };
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of ["VALIDATION_ERROR", ...route.errors, "CHAIN_UNAVAILABLE", "INTERNAL_ERROR"] as ErrorCode[]) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of byStatus) responses[String(status)] = errorResponse(codes.join(", "));
  return responses;
}
