import { randomBytes } from "node:crypto";
import type { SqlExecutor } from "../db";
import { POSITION_AT, timestampOf, type PageRequest, type Position } from "../http/paging";
import type { EventType } from "./events";
import type { SecretSeal } from "./secret-seal";

/** Secrets rotated out that still sign, at most: each rotation within 24 h adds a signature to every delivery. */
const MAX_PREVIOUS_SECRETS = 4;

/** A webhook endpoint as the service keeps it. `secret` never leaves the service after creation. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  events: EventType[];
  collections: string[] | null;
  wallets: string[] | null;
  /** Decimal chain ids; null = every chain. */
  chains?: string[] | null;
  enabled: boolean;
  disabledReason: string | null;
  /** The access key that made it; null for the root key. */
  accessKeyId: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** When the last of the secrets rotated out stops signing; null when none signs. */
  previousSecretUntil: Date | null;
}

/** The columns as WebhookEndpoint names them. previous_secret_until is the time of the newest secret rotated out. */
const ENDPOINT = `id, url, events, collections, wallets, chains, enabled, disabled_reason AS "disabledReason",
  access_key_id AS "accessKeyId", created_at AS "createdAt", updated_at AS "updatedAt",
  CASE WHEN previous_secret_until > now() THEN previous_secret_until END AS "previousSecretUntil"`;

/** What a request sets of an endpoint. */
export type EndpointChanges = Partial<
  Pick<WebhookEndpoint, "url" | "events" | "collections" | "wallets" | "chains" | "enabled">
>;

/** How long a rotated-out secret keeps signing beside the new one. */
const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/** Webhook endpoints in the store (table webhook_endpoints); their secrets sealed by `seal`. */
export class WebhookEndpointStore {
  constructor(
    private readonly db: SqlExecutor,
    private readonly seal: SecretSeal,
  ) {}

  async insert(
    tx: SqlExecutor,
    endpoint: Required<Omit<EndpointChanges, "chains">> & Pick<WebhookEndpoint, "accessKeyId" | "chains">,
    secret: string,
  ): Promise<WebhookEndpoint> {
    const id = `wh_${randomBytes(12).toString("hex")}`;
    const { rows } = await tx.query<WebhookEndpoint>(
      `INSERT INTO webhook_endpoints (id, url, events, collections, wallets, enabled, access_key_id, secret, chains)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${ENDPOINT}`,
      [
        id,
        endpoint.url,
        JSON.stringify(endpoint.events),
        jsonOrNull(endpoint.collections),
        jsonOrNull(endpoint.wallets),
        endpoint.enabled,
        endpoint.accessKeyId,
        this.seal.seal(id, secret),
        jsonOrNull(endpoint.chains ?? null),
      ],
    );
    return rows[0];
  }

  /** A page of the endpoints, oldest first: all of them (`owner` undefined), or those made by one key. */
  async list(owner: string | undefined, page: PageRequest): Promise<Array<WebhookEndpoint & { position: Position }>> {
    const { rows } = await this.db.query<WebhookEndpoint & { position_at: string }>(
      `SELECT ${ENDPOINT}, ${POSITION_AT} AS position_at FROM webhook_endpoints
       WHERE ($1::text IS NULL OR access_key_id = $1)
         AND ($2::text IS NULL OR (created_at, id) > (${timestampOf("$2")}, $3::text))
       ORDER BY created_at, id LIMIT $4`,
      [owner ?? null, page.after?.at ?? null, page.after?.id ?? null, page.limit + 1],
    );
    return rows.map(({ position_at, ...endpoint }) => ({
      ...endpoint,
      position: { at: position_at, id: endpoint.id },
    }));
  }

  async find(id: string): Promise<WebhookEndpoint | null> {
    const { rows } = await this.db.query<WebhookEndpoint>(`SELECT ${ENDPOINT} FROM webhook_endpoints WHERE id = $1`, [
      id,
    ]);
    return rows[0] ?? null;
  }

  /** Applies `changes`; enabling clears the reason it was disabled. Null when there is no such endpoint. */
  async update(tx: SqlExecutor, id: string, changes: EndpointChanges): Promise<WebhookEndpoint | null> {
    const params: unknown[] = [id];
    const sets: string[] = [];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (changes.url !== undefined) set("url", changes.url);
    if (changes.events !== undefined) set("events", JSON.stringify(changes.events));
    if (changes.collections !== undefined) set("collections", jsonOrNull(changes.collections));
    if (changes.wallets !== undefined) set("wallets", jsonOrNull(changes.wallets));
    if (changes.chains !== undefined) set("chains", jsonOrNull(changes.chains));
    if (changes.enabled !== undefined) {
      set("enabled", changes.enabled);
      set("disabled_reason", changes.enabled ? null : "disabled through the API");
    }
    const { rows } = await tx.query<WebhookEndpoint>(
      `UPDATE webhook_endpoints SET ${[...sets, "updated_at = now()"].join(", ")} WHERE id = $1 RETURNING ${ENDPOINT}`,
      params,
    );
    return rows[0] ?? null;
  }

  /**
   * A new current secret; the old one signs beside it for ROTATION_OVERLAP_MS, as do those rotated
   * out before it whose time has not run out (the newest MAX_PREVIOUS_SECRETS).
   */
  async rotateSecret(tx: SqlExecutor, id: string, secret: string): Promise<WebhookEndpoint | null> {
    const { rows } = await tx.query<WebhookEndpoint>(
      `UPDATE webhook_endpoints w
       SET previous_secret = (
             SELECT jsonb_agg(x.p ORDER BY x.n) FROM (
               SELECT jsonb_build_object('secret', w.secret, 'until', now() + $3 * interval '1 millisecond') AS p, 0 AS n
               UNION ALL
               SELECT e.p, e.n FROM jsonb_array_elements(coalesce(w.previous_secret, '[]')) WITH ORDINALITY AS e(p, n)
               WHERE (e.p ->> 'until')::timestamptz > now()
               ORDER BY n LIMIT $4) x),
           previous_secret_until = now() + $3 * interval '1 millisecond',
           secret = $2, updated_at = now()
       WHERE id = $1 RETURNING ${ENDPOINT}`,
      [id, this.seal.seal(id, secret), ROTATION_OVERLAP_MS, MAX_PREVIOUS_SECRETS],
    );
    return rows[0] ?? null;
  }

  /** Deletes the endpoint and its delivery log. */
  async delete(tx: SqlExecutor, id: string): Promise<boolean> {
    const { rows } = await tx.query<{ deleted: string | number }>(
      `WITH gone AS (DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id),
       queue AS (DELETE FROM webhook_deliveries WHERE endpoint_id IN (SELECT id FROM gone)),
       log AS (DELETE FROM webhook_delivery_log WHERE endpoint_id IN (SELECT id FROM gone))
       SELECT count(*) AS deleted FROM gone`,
      [id],
    );
    return Number(rows[0]?.deleted ?? 0) > 0;
  }

  /** A receiver answered 410 Gone: the endpoint stops receiving until it is enabled again. */
  async disableGone(tx: SqlExecutor, id: string): Promise<boolean> {
    const { rowCount } = await tx.query(
      `UPDATE webhook_endpoints SET enabled = false, disabled_reason = '410 Gone from the receiver', updated_at = now()
       WHERE id = $1 AND enabled`,
      [id],
    );
    return rowCount > 0;
  }
}

const jsonOrNull = (list: string[] | null) => (list === null ? null : JSON.stringify(list));
