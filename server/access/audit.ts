import type { Context } from "koa";
import type { SqlExecutor } from "../db";
import type { AccessPrincipal } from "./principal";

/** Who made a change: the key, and where the request came from. */
export interface AuditActor {
  keyId: string | null;
  keyName: string;
  clientAddress: string;
}

/** A change to keys, wallets, webhooks or policies. `details` must never hold a secret. */
export interface AuditEntry {
  action: string;
  targetType: "access-key" | "wallet" | "webhook" | "master-key";
  targetId: string;
  details?: Record<string, unknown>;
}

export interface AuditEvent extends AuditEntry, AuditActor {
  id: string;
  at: Date;
}

interface AuditRow {
  id: string | number;
  at: Date | string;
  action: string;
  target_type: AuditEntry["targetType"];
  target_id: string;
  details: Record<string, unknown> | string | null;
  actor_key_id: string | null;
  actor_name: string;
  client_address: string;
}

/** The request's actor, from the access key the router put on the context. */
export function auditActor(ctx: Context): AuditActor {
  const principal = ctx.state.access as AccessPrincipal | undefined;
  return { keyId: principal?.keyId ?? null, keyName: principal?.name ?? "anonymous", clientAddress: ctx.ip };
}

/**
 * The audit trail (table audit_events). Record an event on the transaction that makes the change,
 * so a change and its event are stored together or not at all.
 */
export class AuditLog {
  constructor(private readonly db: SqlExecutor) {}

  async record(tx: SqlExecutor, actor: AuditActor, entry: AuditEntry): Promise<void> {
    await tx.query(
      `INSERT INTO audit_events (action, target_type, target_id, details, actor_key_id, actor_name, client_address)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        entry.action,
        entry.targetType,
        entry.targetId,
        JSON.stringify(entry.details ?? {}),
        actor.keyId,
        actor.keyName,
        actor.clientAddress,
      ],
    );
  }

  /** Newest first; `before` is the id of the last event of the previous page. */
  async list(limit: number, before?: string): Promise<AuditEvent[]> {
    const { rows } = await this.db.query<AuditRow>(
      `SELECT * FROM audit_events WHERE ($1::bigint IS NULL OR id < $1::bigint) ORDER BY id DESC LIMIT $2`,
      [before ?? null, limit],
    );
    return rows.map((row) => ({
      id: String(row.id),
      at: new Date(row.at),
      action: row.action,
      targetType: row.target_type,
      targetId: row.target_id,
      details: typeof row.details === "string" ? JSON.parse(row.details) : (row.details ?? {}),
      keyId: row.actor_key_id,
      keyName: row.actor_name,
      clientAddress: row.client_address,
    }));
  }
}
