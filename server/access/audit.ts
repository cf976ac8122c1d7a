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
  targetType: "access-key" | "wallet" | "webhook" | "master-key" | "mcp-tool" | "approval";
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

  /**
   * Newest first; `before` is the id of the last event of the previous page. A `viewer` limited to
   * some wallets or collections sees only the events about them: its wallets, the keys it made (and
   * theirs, which hold no more than it does), and webhook endpoints filtered to within its limits.
   * A collection is within them as collectionFilterBeyond (principal.ts) says: an endpoint's entry
   * `<chain>:<address>` is within the address or that entry; a bare address, within the address,
   * or within `<chain>:<address>` on each chain of the endpoint's `chains` filter.
   */
  async list(limit: number, before?: string, viewer?: AccessPrincipal): Promise<AuditEvent[]> {
    const limited = viewer !== undefined && (viewer.wallets !== null || viewer.collections !== null);
    const list = (addresses: readonly string[] | null | undefined) => (addresses ? JSON.stringify(addresses) : null);
    const { rows } = await this.db.query<AuditRow>(
      `WITH RECURSIVE descendants(id) AS (
         SELECT id FROM access_keys WHERE created_by = $4::text
         UNION SELECT k.id FROM access_keys k JOIN descendants d ON k.created_by = d.id)
       SELECT e.* FROM audit_events e
       WHERE ($1::bigint IS NULL OR e.id < $1::bigint)
         AND (NOT $3::boolean OR CASE e.target_type
           WHEN 'wallet' THEN $5::jsonb IS NULL OR $5::jsonb ? lower(e.target_id)
           WHEN 'access-key' THEN e.target_id IN (SELECT id FROM descendants)
           WHEN 'webhook' THEN EXISTS (
             SELECT 1 FROM webhook_endpoints w WHERE w.id = e.target_id
               AND ($5::jsonb IS NULL OR w.wallets <@ $5::jsonb)
               AND ($6::jsonb IS NULL OR (w.collections IS NOT NULL AND NOT EXISTS (
                 SELECT 1 FROM jsonb_array_elements_text(w.collections) f(entry)
                 WHERE NOT ($6::jsonb ? regexp_replace(f.entry, '^.*:', '')
                   OR (f.entry LIKE '%:%' AND $6::jsonb ? f.entry)
                   OR (f.entry NOT LIKE '%:%' AND w.chains IS NOT NULL AND NOT EXISTS (
                     SELECT 1 FROM jsonb_array_elements_text(w.chains) c(id)
                     WHERE NOT $6::jsonb ? (c.id || ':' || f.entry))))))))
           ELSE false END)
       ORDER BY e.id DESC LIMIT $2`,
      [before ?? null, limit, limited, viewer?.keyId ?? null, list(viewer?.wallets), list(viewer?.collections)],
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
