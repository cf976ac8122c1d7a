import { operationView, type ViewedOperation } from "../engine";
import type { ClaimedDelivery } from "./outbox";

/** The operation row as webhook_operation_data (server/db/functions) snapshots it, in JSON. */
type OperationSnapshot = Omit<ViewedOperation, "final" | "reorgs" | "createdAt" | "updatedAt"> & {
  /** Absent from snapshots written before migration 16. */
  final?: boolean;
  reorgs?: number;
  createdAt: string;
  updatedAt: string;
};

/**
 * The JSON body POSTed for an event, `{"type","timestamp","data"}`, rendered from what the outbox
 * keeps of it, which never changes: every endpoint and every retry gets the same bytes. An
 * operation event's data is the operation as GET /nft/operations/{id} showed it at the change
 * (the engine's operationView of the trigger's snapshot).
 */
export function renderEventBody(event: Pick<ClaimedDelivery, "type" | "data" | "eventCreatedAt">): string {
  let data = event.data;
  if (event.type.startsWith("operation.")) {
    const s = event.data as unknown as OperationSnapshot;
    const times = { createdAt: new Date(s.createdAt), updatedAt: new Date(s.updatedAt) };
    data = operationView({ ...s, final: s.final ?? false, reorgs: s.reorgs ?? 0, ...times });
  }
  return JSON.stringify({ type: event.type, timestamp: new Date(event.eventCreatedAt).toISOString(), data });
}
