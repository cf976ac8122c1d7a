import { getAddress } from "ethers";
import type { SqlExecutor } from "../db";
import type { Operation, OperationStatus } from "./operation";
import { COLUMNS, toOperation, type OperationRow } from "./operation-store";

/** Who reads the list: everything (the root key), or what one access key could have made. */
export type OperationReader =
  | { all: true }
  | {
      all: false;
      /** The key's id: the operations it made are always its to read. */
      keyId: string;
      /** Wallets (any case) the key may use; null = all. */
      wallets: readonly string[] | null;
      /** Collections (any case) the key may act on; null = all. */
      collections: readonly string[] | null;
    };

export interface OperationListQuery {
  chainId: string;
  reader: OperationReader;
  status?: OperationStatus;
  /** The signing address (`from`). */
  wallet?: string;
  /** The collection acted on (for a deployment, the one it made). */
  collection?: string;
  /** Where the previous page ended: its last row's created_at (as the store writes it) and id. */
  after?: { createdAt: string; id: string };
  limit: number;
}

export interface OperationPage {
  operations: Operation[];
  /** Where this page ended, when there may be more. */
  next?: { createdAt: string; id: string };
}

/**
 * GET /nft/operations in SQL: newest first, keyset-paged on (created_at, id), so that a page costs
 * the same at any depth and any table size (migration 21's indexes serve each filter). A limited
 * key's rule is the one GET /nft/operations/{id} applies to a single operation (couldHaveMade).
 */
export class OperationList {
  constructor(private readonly db: SqlExecutor) {}

  async page(query: OperationListQuery): Promise<OperationPage> {
    const params: unknown[] = [query.chainId];
    const param = (value: unknown) => `$${params.push(value)}`;
    const where = ["chain_id = $1"];
    if (query.status) {
      where.push(`status = ${param(query.status)}`);
      // Spelled out so the planner picks the small partial index of the unsettled and failed ones.
      if (query.status !== "confirmed") where.push("status <> 'confirmed'");
    }
    if (query.wallet) where.push(`from_address = ${param(getAddress(query.wallet))}`);
    if (query.collection) where.push(`contract_address = ${param(getAddress(query.collection))}`);
    if (!query.reader.all) where.push(readableBy(query.reader, param));
    if (query.after)
      where.push(`(created_at, id) < (${param(query.after.createdAt)}::timestamptz, ${param(query.after.id)})`);
    const { rows } = await this.db.query<OperationRow & { created_key: string }>(
      `SELECT ${COLUMNS}, created_at::text AS created_key FROM operations
       WHERE ${where.join(" AND ")}
       ORDER BY created_at DESC, id DESC
       LIMIT ${param(query.limit + 1)}`,
      params,
    );
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      operations: page.map(toOperation),
      ...(rows.length > query.limit ? { next: { createdAt: last.created_key, id: last.id } } : {}),
    };
  }
}

/**
 * A limited key reads what it made, and what was made on its collections by its wallets: a
 * deployment (its collection is new) or a nonce fill names no collection, so only its wallet counts.
 */
function readableBy(reader: Extract<OperationReader, { all: false }>, param: (value: unknown) => string): string {
  const limits: string[] = [];
  if (reader.collections)
    limits.push(
      `(operation = 'deploy' OR contract_address IS NULL OR contract_address = ANY(${param(reader.collections.map(checksum))}::text[]))`,
    );
  if (reader.wallets) limits.push(`from_address = ANY(${param(reader.wallets.map(checksum))}::text[])`);
  if (limits.length === 0) return "true";
  return `(access_key_id = ${param(reader.keyId)} OR (${limits.join(" AND ")}))`;
}

const checksum = (address: string) => getAddress(address.toLowerCase());
