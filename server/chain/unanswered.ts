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
