import { getAddress } from "ethers";
import type { SqlExecutor } from "../db";
import { collectionEntry } from "../http/fields";
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
  /** One chain's operations; unset = every chain's (migration 24's indexes). */
  chainId?: string;
  /** Only these chains' operations (a key limited to some chains); unset = every chain's. */
  chainIds?: readonly string[];
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
    const params: unknown[] = [];
    const param = (value: unknown) => `$${params.push(value)}`;
    const where = [query.chainId === undefined ? "TRUE" : `chain_id = ${param(query.chainId)}`];
    if (query.chainIds) where.push(`chain_id = ANY(${param([...query.chainIds])}::text[])`);
    if (query.status) {
      where.push(`status = ${param(query.status)}`);
      // Spelled out so the planner picks the small partial index of the unsettled and failed ones.
      if (query.status !== "confirmed") where.push("status <> 'confirmed'");
    }
    if (query.wallet) where.push(`from_address = ${param(getAddress(query.wallet))}`);
    if (query.collection) where.push(`contract_address = ${param(getAddress(query.collection))}`);
    if (query.after)
      where.push(`(created_at, id) < (${param(query.after.createdAt)}::timestamptz, ${param(query.after.id)})`);
    const limit = param(query.limit + 1);
    const newest = `ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
    const branches = query.reader.all ? null : readableBranches(query.reader, param);
    const sql =
      branches === null
        ? `SELECT ${COLUMNS}, created_at::text AS created_key FROM operations WHERE ${where.join(" AND ")} ${newest}`
        : `WITH picked AS (${branches.map((branch) => `(${branch(where, newest)})`).join(" UNION ")})
           SELECT ${COLUMNS}, created_at::text AS created_key FROM operations
           WHERE id IN (SELECT id FROM picked ${newest})
           ${newest}`;
    const { rows } = await this.db.query<OperationRow & { created_key: string }>(sql, params);
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      operations: page.map(toOperation),
      ...(rows.length > query.limit ? { next: { createdAt: last.created_key, id: last.id } } : {}),
    };
  }
}

/** One part of a limited key's list: the SQL of its newest rows (`id, created_at`), from an index of migration 21. */
type Branch = (where: string[], newest: string) => string;

const rowsWhere =
  (own: string): Branch =>
  (where, newest) =>
    `SELECT id, created_at FROM operations WHERE ${[...where, own].join(" AND ")} ${newest}`;

/** The newest rows of each address of a list (with its chain, or null for every chain), one index walk per address. */
const perAddress =
  (column: string, list: AddressList, extra?: string): Branch =>
  (where, newest) =>
    `SELECT l.id, l.created_at FROM unnest(${list.addresses}::text[], ${list.chains}::text[]) AS a(address, chain)
     CROSS JOIN LATERAL (
       SELECT id, created_at FROM operations
       WHERE ${[...where, `${column} = a.address`, "(a.chain IS NULL OR chain_id = a.chain)", ...(extra ? [extra] : [])].join(" AND ")} ${newest}) AS l`;

/** Two parameters: addresses (checksummed) and, beside each, its chain or null. */
interface AddressList {
  addresses: string;
  chains: string;
}

/**
 * What a limited key reads, as GET /nft/operations/{id} decides for one (couldHaveMade): what it
 * made, and what was made by its wallets (if it is limited to some) on its collections (if it is
 * limited to some; an entry `<chain>:<address>` on that chain only). A deployment counts as an
 * operation on the collection it made; a nonce fill, or a deployment not yet mined, names no
 * collection, so a key limited to collections sees it only if it made it. Null: everything. Each
 * part walks its own index; an OR over them would walk the whole table for a key that sees little of it.
 */
function readableBranches(
  reader: Extract<OperationReader, { all: false }>,
  param: (value: unknown) => string,
): Branch[] | null {
  if (!reader.wallets && !reader.collections) return null;
  const own = rowsWhere(`access_key_id = ${param(reader.keyId)}`);
  const listOf = (entries: readonly string[]): AddressList => {
    const split = entries.map(limitEntry);
    return { addresses: param(split.map((e) => e.address)), chains: param(split.map((e) => e.chain)) };
  };
  if (reader.wallets) {
    const collections = reader.collections ? listOf(reader.collections) : undefined;
    const onCollections = collections
      ? `EXISTS (SELECT 1 FROM unnest(${collections.addresses}::text[], ${collections.chains}::text[]) AS c(address, chain)
           WHERE contract_address = c.address AND (c.chain IS NULL OR chain_id = c.chain))`
      : undefined;
    return [own, perAddress("from_address", listOf(reader.wallets), onCollections)];
  }
  return [own, perAddress("contract_address", listOf(reader.collections!))];
}

/** A limit's entry: `0x…` (every chain) or `<chain id>:0x…`, the address checksummed as the store keeps it. */
function limitEntry(entry: string): { address: string; chain: string | null } {
  const { chain, address } = collectionEntry(entry);
  return { address: getAddress(address.toLowerCase()), chain: chain ?? null };
}
