/** The transaction engine: operations in the store, pipelined nonces, and the follower. */
export { TransactionEngine, type WriteAnswer, type WriteRequest } from "./transaction-engine";
export {
  DEFAULT_ENGINE_TIMING,
  type EngineMetrics,
  type EngineOptions,
  type OperationKind,
  type ResendGuard,
  type SpendGuard,
  type SpendRefund,
} from "./context";
export {
  OperationStore,
  countOperationsSharingTransaction,
  failApprovedIn,
  failAwaitingIn,
  insertHeldIn,
  NotAwaitingApproval,
  type ApprovalDecision,
} from "./operation-store";
export { MemoryNonceAllocator, SqlNonceAllocator, type NonceAllocator } from "./nonce-allocator";
export type { Operation, OperationStatus } from "./operation";
export { fingerprintOf, idempotencyKeyOf } from "./idempotency";
export * from "./write-response";
export { openEngine, type OpenEngineOptions } from "./open";
