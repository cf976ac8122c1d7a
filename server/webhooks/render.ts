import { operationView, type Operation } from "../engine";

/** The operation row as webhook_operation_data (server/db/functions) snapshots it. */
interface OperationSnapshot {
  id: string;
  operation: string;
  status: Operation["status"];
  from: string;
  contractAddress: string | null;
  nonce: number | null;
  transactions: { hash: string }[];
  blockNumber: number | null;
  result: Record<string, unknown> | null;
  error: Operation["error"];
  /** Absent from snapshots written before migration 16. */
  final?: boolean;
  reorgs?: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * The JSON body POSTed for an event, `{"type","timestamp","data"}`, rendered from what the outbox
 * keeps of it, which never changes: every endpoint and every retry gets the same bytes. An
 * operation event's data is the operation as GET /nft/operations/{id} showed it at the change
 * (the engine's operationView of the trigger's snapshot).
 */
export function renderEventBody(event: { type: string; data: Record<string, unknown>; createdAt: Date }): string {
  const data = event.type.startsWith("operation.")
    ? operationView(fromSnapshot(event.data as unknown as OperationSnapshot))
    : event.data;
  return JSON.stringify({ type: event.type, timestamp: event.createdAt.toISOString(), data });
}

function fromSnapshot(s: OperationSnapshot): Operation {
  return {
    id: s.id,
    chainId: "",
    from: s.from,
    operation: s.operation,
    contractAddress: s.contractAddress,
    fingerprint: "",
    idempotencyKey: null,
    status: s.status,
    nonce: s.nonce === null ? null : Number(s.nonce),
    call: null,
    transactions: s.transactions.map(({ hash }) => ({ hash, raw: "" })),
    context: {},
    result: s.result,
    error: s.error,
    response: null,
    blockNumber: s.blockNumber === null ? null : Number(s.blockNumber),
    blockHash: null,
    pendingSince: null,
    pendingSinceAt: null,
    final: s.final ?? false,
    reorgs: s.reorgs ?? 0,
    accessKeyId: null,
    createdAt: new Date(s.createdAt),
    updatedAt: new Date(s.updatedAt),
  };
}
