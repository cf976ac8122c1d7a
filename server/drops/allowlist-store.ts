import { getAddress } from "ethers";
import type { SqlDriver } from "../db";
import { proofIndices, type AllowlistEntry, type AllowlistTree } from "./allowlist-tree";

export interface StoredAllowlist {
  root: string;
  entries: number;
  operationId: string | null;
  createdAt: string;
}

export interface AllowlistLeaf {
  allowance: bigint;
  price: bigint;
  proof: string[];
}

/** Each collection's allowlist tree (migrations 20 and 23): written whole, and a proof read from it in two small queries. */
export class AllowlistStore {
  constructor(
    private readonly db: SqlDriver,
    private readonly chainId: string,
  ) {}

  /** Replaces the collection's allowlist with `tree` of `entries`, in one transaction. */
  async save(
    collection: string,
    entries: AllowlistEntry[],
    tree: AllowlistTree,
    operationId: string | null,
  ): Promise<void> {
    const address = collection.toLowerCase();
    await this.db.transaction(async (tx) => {
      // Entries first: they have no foreign key to their allowlist (migration 23).
      await tx.query("DELETE FROM allowlist_entries WHERE chain_id = $1 AND address = $2", [this.chainId, address]);
      await tx.query("DELETE FROM allowlists WHERE chain_id = $1 AND address = $2", [this.chainId, address]);
      await tx.query(
        `INSERT INTO allowlists (chain_id, address, root, entries, nodes, operation_id)
         VALUES ($1, $2, $3, $4, decode($5, 'hex'), $6)`,
        [this.chainId, address, tree.root, entries.length, tree.nodes.toString("hex"), operationId],
      );
      await tx.query(
        `INSERT INTO allowlist_entries (chain_id, address, account, allowance, price, tree_index)
         SELECT $1, $2, u.account, u.allowance::numeric, u.price::numeric, u.tree_index
         FROM unnest($3::text[], $4::text[], $5::text[], $6::int[]) AS u(account, allowance, price, tree_index)`,
        [
          this.chainId,
          address,
          entries.map((e) => e.address.toLowerCase()),
          entries.map((e) => e.allowance.toString()),
          entries.map((e) => e.price.toString()),
          tree.treeIndex,
        ],
      );
    });
  }

  async find(collection: string): Promise<StoredAllowlist | undefined> {
    const { rows } = await this.db.query<{
      root: string;
      entries: number;
      operation_id: string | null;
      created_at: Date | string;
    }>("SELECT root, entries, operation_id, created_at FROM allowlists WHERE chain_id = $1 AND address = $2", [
      this.chainId,
      collection.toLowerCase(),
    ]);
    const row = rows[0];
    if (!row) return undefined;
    return {
      root: row.root,
      entries: Number(row.entries),
      operationId: row.operation_id,
      createdAt: new Date(row.created_at).toISOString(),
    };
  }

  /** `account`'s leaf and its proof, read from the stored nodes (no tree is rebuilt); undefined when not listed. */
  async leaf(collection: string, account: string): Promise<AllowlistLeaf | undefined> {
    const address = collection.toLowerCase();
    const { rows } = await this.db.query<{ allowance: string; price: string; tree_index: number }>(
      `SELECT allowance::text, price::text, tree_index FROM allowlist_entries
       WHERE chain_id = $1 AND address = $2 AND account = $3`,
      [this.chainId, address, getAddress(account).toLowerCase()],
    );
    const entry = rows[0];
    if (!entry) return undefined;
    const indices = proofIndices(Number(entry.tree_index));
    const { rows: nodes } = await this.db.query<{ node: string }>(
      `SELECT encode(substring(a.nodes FROM u.i * 32 + 1 FOR 32), 'hex') AS node
       FROM allowlists a, unnest($3::int[]) WITH ORDINALITY AS u(i, n)
       WHERE a.chain_id = $1 AND a.address = $2 ORDER BY u.n`,
      [this.chainId, address, indices],
    );
    return {
      allowance: BigInt(entry.allowance),
      price: BigInt(entry.price),
      proof: nodes.map((row) => `0x${row.node}`),
    };
  }
}
