import { ApiError } from "../http/errors";

/**
 * Failures where the chain's JSON-RPC gave no answer at all: every URL failed (a 5xx, a reset, a
 * timeout, or only URLs behind answering). The provider marks them where its transport throws, so
 * that a request path which does not map its chain errors (a fee quote, a nonce read, a block
 * read in a route) still answers 503 CHAIN_UNAVAILABLE, never 500. The error keeps its ethers code:
 * the engine reads those (a lost broadcast, say).
 */
const UNANSWERED = Symbol("chainUnanswered");

/** Marks `err` as the chain not answering, and returns it. */
export function markUnanswered<T>(err: T): T {
  if (typeof err === "object" && err !== null && Object.isExtensible(err)) {
    Object.defineProperty(err, UNANSWERED, { value: true });
  }
  return err;
}

/** Whether `err` is a failure the provider marked: the chain did not answer. */
export function isUnanswered(err: unknown): boolean {
  return typeof err === "object" && err !== null && UNANSWERED in err;
}

/** 503 CHAIN_UNAVAILABLE, as every request path answers a chain question no URL answered. */
export function chainUnavailable(): ApiError {
  return new ApiError("CHAIN_UNAVAILABLE", "The JSON-RPC endpoint does not answer");
}

/** What an internal error says when it is the call's own outcome (a revert, a refusal), not the node failing. */
export const CALL_OUTCOME =
  /revert|execution|vm exception|invalid opcode|out of gas|nonce|insufficient|underpriced|gas|fee/i;

/** A JSON-RPC error object as a node answers it. */
export interface JsonRpcErrorObject {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}

/** A JSON-RPC "internal error" (-32603) with no data, that is the node failing, not the call's own outcome. */
export function isBareInternalError(error: JsonRpcErrorObject | undefined): boolean {
  if (!error || error.code !== -32603) return false;
  return (error.data === undefined || error.data === null) && !CALL_OUTCOME.test(String(error.message ?? ""));
}

/**
 * Whether ethers threw for a node's bare internal error, on every URL asked (the failover asks the
 * next URL for one): the chain did not answer the question. ethers keeps the node's error at
 * `info.error` for a call or an estimate (as a CALL_EXCEPTION without data), else at `error`.
 */
export function isNodeFailure(err: unknown): boolean {
  const e = err as { info?: { error?: JsonRpcErrorObject }; error?: JsonRpcErrorObject } | null;
  if (typeof e !== "object" || e === null) return false;
  return isBareInternalError(e.info?.error) || isBareInternalError(e.error);
}
