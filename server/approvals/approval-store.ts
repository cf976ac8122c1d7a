import { randomBytes } from "node:crypto";
import type { AccessPrincipal } from "../access";
import type { SqlExecutor } from "../db";
import { POSITION_AT, timestampOf, type PageRequest, type Position } from "../http/paging";
import type { z } from "zod";
import type { ApprovalPlanOf } from "./schemas";

export type ApprovalStatus = "pending" | "approved" | "rejected" | "expired";

export interface KeyRef {
  keyId: string;
  name: string;
}

/** A held write's or job's decision (table approvals, migrations 36 and 37). */
export interface Approval {
  id: string;
  /** The held write's operation; null for a job. */
  operationId: string | null;
  /** The held job; null for a write. */
  jobId: string | null;
  chainId: string;
  from: string;
  /** Lower case; null for a deployment. */
  collection: string | null;
  status: ApprovalStatus;
  plan: z.infer<typeof ApprovalPlanOf>;
  requestedBy: KeyRef;
  decidedBy: KeyRef | null;
  reason: string | null;
  decidedAt: Date | null;
  expiresAt: Date;
  createdAt: Date;
}

interface ApprovalRow {
  id: string;
  operation_id: string | null;
  job_id: string | null;
  chain_id: string;
  from_address: string;
  collection: string | null;
  status: ApprovalStatus;
  plan: Approval["plan"] | string;
  requested_by: string;
  requested_by_name: string;
  decided_by: string | null;
  decided_by_name: string | null;
  reason: string | null;
  decided_at: Date | string | null;
  expires_at: Date | string;
  created_at: Date | string;
  position_at?: string;
}

const COLUMNS = `id, operation_id, job_id, chain_id, from_address, collection, status, plan, requested_by, requested_by_name,
  decided_by, decided_by_name, reason, decided_at, expires_at, created_at`;

export const newApprovalId = () => `apr_${randomBytes(12).toString("hex")}`;

/** The approvals in SQL. Every decision is a conditional UPDATE: one wins, on any instance. */
export class ApprovalStore {
  constructor(private readonly db: SqlExecutor) {}

  async insert(
    tx: SqlExecutor,
    approval: Omit<Approval, "status" | "decidedBy" | "reason" | "decidedAt" | "createdAt" | "expiresAt">,
    ttlMs: number,
  ): Promise<Approval> {
    const { rows } = await tx.query<ApprovalRow>(
      `INSERT INTO approvals (id, operation_id, chain_id, from_address, collection, status, plan, requested_by,
         requested_by_name, expires_at, job_id)
       VALUES ($1, $2, $3, $4, $5, 'pending', $6::jsonb, $7, $8, now() + $9 * interval '1 millisecond', $10)
       RETURNING ${COLUMNS}`,
      [
        approval.id,
        approval.operationId,
        approval.chainId,
        approval.from.toLowerCase(),
        approval.collection?.toLowerCase() ?? null,
        JSON.stringify(approval.plan),
        approval.requestedBy.keyId,
        approval.requestedBy.name,
        ttlMs,
        approval.jobId,
      ],
    );
    return toApproval(rows[0]);
  }

  async find(id: string): Promise<Approval | null> {
    const { rows } = await this.db.query<ApprovalRow>(`SELECT ${COLUMNS} FROM approvals WHERE id = $1`, [id]);
    return rows[0] ? toApproval(rows[0]) : null;
  }

  /** A page, newest first, of the approvals within `viewer`'s chains, wallets and collections. */
  async list(
    viewer: AccessPrincipal,
    status: ApprovalStatus | undefined,
    page: PageRequest,
  ): Promise<Array<Approval & { position: Position }>> {
    const list = (values: readonly string[] | null | undefined) => (values ? JSON.stringify(values) : null);
    const { rows } = await this.db.query<ApprovalRow>(
      `SELECT ${COLUMNS}, ${POSITION_AT} AS position_at FROM approvals
       WHERE ($1::text IS NULL OR status = $1)
         AND ($2::text IS NULL OR (created_at, id) < (${timestampOf("$2")}, $3::text))
         AND ($5::jsonb IS NULL OR $5::jsonb ? chain_id)
         AND ($6::jsonb IS NULL OR $6::jsonb ? from_address)
         AND ($7::jsonb IS NULL OR $7::jsonb ? collection OR $7::jsonb ? (chain_id || ':' || collection))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [
        status ?? null,
        page.after?.at ?? null,
        page.after?.id ?? null,
        page.limit + 1,
        list(viewer.chains),
        list(viewer.wallets),
        list(viewer.collections),
      ],
    );
    return rows.map((row) => ({ ...toApproval(row), position: { at: row.position_at!, id: row.id } }));
  }

  /**
   * Decides a pending approval not yet expired, on `tx`: the decision, or null when it is decided
   * or expired already (two decisions at once: one gets the row).
   */
  async decide(
    tx: SqlExecutor,
    id: string,
    status: "approved" | "rejected",
    decider: KeyRef,
    reason: string | null,
  ): Promise<Approval | null> {
    const { rows } = await tx.query<ApprovalRow>(
      `UPDATE approvals SET status = $2, decided_by = $3, decided_by_name = $4, reason = $5, decided_at = now()
       WHERE id = $1 AND status = 'pending' AND expires_at > now()
       RETURNING ${COLUMNS}`,
      [id, status, decider.keyId, decider.name, reason],
    );
    return rows[0] ? toApproval(rows[0]) : null;
  }

  /** Marks every pending approval past its expiry as expired, on `tx`: the ones it marked. */
  async expireDue(tx: SqlExecutor): Promise<Approval[]> {
    const { rows } = await tx.query<ApprovalRow>(
      `UPDATE approvals SET status = 'expired', decided_at = now()
       WHERE id IN (SELECT id FROM approvals WHERE status = 'pending' AND expires_at <= now()
                    ORDER BY expires_at LIMIT 500 FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
    );
    return rows.map(toApproval);
  }
}

const date = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

function toApproval(row: ApprovalRow): Approval {
  return {
    id: row.id,
    operationId: row.operation_id,
    jobId: row.job_id ?? null,
    chainId: row.chain_id,
    from: row.from_address,
    collection: row.collection,
    status: row.status,
    plan: typeof row.plan === "string" ? (JSON.parse(row.plan) as Approval["plan"]) : row.plan,
    requestedBy: { keyId: row.requested_by, name: row.requested_by_name },
    decidedBy: row.decided_by === null ? null : { keyId: row.decided_by, name: row.decided_by_name ?? "" },
    reason: row.reason,
    decidedAt: date(row.decided_at),
    expiresAt: date(row.expires_at)!,
    createdAt: date(row.created_at)!,
  };
}
