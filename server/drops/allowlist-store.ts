import { getAddress } from "ethers";
import type { SqlDriver } from "../db";
import { proofIndices, type AllowlistEntry, type AllowlistTree } from "./allowlist-tree";

export interface StoredAllowlist {
  root: string;
  entries: number;
  operationId: string | null;
  createdAt: string;
}

/** A collection's allowlists: the one in force (its root on chain), and the newest pending one. */
export interface CollectionAllowlists {
  active?: StoredAllowlist;
  pending?: StoredAllowlist;
}

export interface AllowlistLeaf {
  allowance: bigint;
  price: bigint;
  proof: string[];
}

/**
 * Where a list stands, by its operation (migration 25): in force once the follower has confirmed
 * it (or with no transaction: its root was on chain already, `seen_block`); pending while it is
 * queued or sent, or not linked to its operation yet. A reorg that sends the operation back to
 * `sent` makes the list pending again, and the one before it active.
 */
const IN_FORCE = `((a.operation_id IS NULL AND a.seen_block IS NOT NULL) OR o.status = 'confirmed')`;
const PENDING = `((a.operation_id IS NULL AND a.seen_block IS NULL) OR o.status IN ('queued', 'sent'))`;
/**
 * The list in force of collection $2 on chain $1: the one the chain applied last, by block, then
 * nonce (the owner's two PUTs mined in one block), whatever order their requests were answered in.
 */
const ACTIVE_ROOT = `
  SELECT a.root FROM allowlists a LEFT JOIN operations o ON o.id = a.operation_id
  WHERE a.chain_id = $1 AND a.address = $2 AND ${IN_FORCE}
  ORDER BY COALESCE(o.block_number, a.seen_block) DESC, o.nonce DESC NULLS LAST, a.created_at DESC LIMIT 1`;

/** Each collection's allowlist trees (migrations 20, 23, 25): written whole, and a proof read from the one in force in two small queries. */
export class AllowlistStore {
  constructor(
    private readonly db: SqlDriver,
    private readonly chainId: string,
  ) {}

  /**
   * Keeps `tree` of `entries` beside the collection's other lists, linked to the operation that sets
   * its root (`seenBlock`: the head, for a root that was on chain already). A list of the same root
   * is kept once. Lists no longer needed go: those whose operation failed, and those in force
   * before the active one.
   */
  async save(
    collection: string,
    entries: AllowlistEntry[],
    tree: AllowlistTree,
    link: { operationId: string | null; seenBlock?: number },
  ): Promise<void> {
    const address = collection.toLowerCase();
    await this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ inserted: boolean }>(
        `INSERT INTO allowlists (chain_id, address, root, entries, nodes, operation_id, seen_block)
         VALUES ($1, $2, $3, $4, decode($5, 'hex'), $6, $7)
         ON CONFLICT (chain_id, address, root) DO UPDATE
           SET operation_id = EXCLUDED.operation_id, seen_block = EXCLUDED.seen_block
         RETURNING (xmax = 0) AS inserted`,
        [
          this.chainId,
          address,
          tree.root,
          entries.length,
          tree.nodes.toString("hex"),
          link.operationId,
          link.seenBlock ?? null,
        ],
      );
      // The same root PUT again (set anew after another): its tree and entries are kept, its link is the new one.
      if (rows[0].inserted)
        await tx.query(
          `INSERT INTO allowlist_entries (chain_id, address, root, account, allowance, price, tree_index)
           SELECT $1, $2, $3, u.account, u.allowance::numeric, u.price::numeric, u.tree_index
           FROM unnest($4::text[], $5::text[], $6::text[], $7::int[]) AS u(account, allowance, price, tree_index)`,
          [
            this.chainId,
            address,
            tree.root,
            entries.map((e) => e.address.toLowerCase()),
            entries.map((e) => e.allowance.toString()),
            entries.map((e) => e.price.toString()),
            tree.treeIndex,
          ],
        );
      // Entries first: they have no foreign key to their allowlist (migration 23).
      const { rows: gone } = await tx.query<{ root: string }>(
        `SELECT a.root FROM allowlists a LEFT JOIN operations o ON o.id = a.operation_id
         WHERE a.chain_id = $1 AND a.address = $2 AND a.root <> $3
           AND (o.status = 'failed' OR (${IN_FORCE} AND a.root IS DISTINCT FROM (${ACTIVE_ROOT})))`,
        [this.chainId, address, tree.root],
      );
      const roots = gone.map((row) => row.root);
      if (roots.length === 0) return;
      await tx.query("DELETE FROM allowlist_entries WHERE chain_id = $1 AND address = $2 AND root = ANY($3::text[])", [
        this.chainId,
        address,
        roots,
      ]);
      await tx.query("DELETE FROM allowlists WHERE chain_id = $1 AND address = $2 AND root = ANY($3::text[])", [
        this.chainId,
        address,
        roots,
      ]);
    });
  }

  /** Whether a list linked to `operationId` is kept (a replayed PUT need not build its tree again). */
  async hasOperation(operationId: string): Promise<boolean> {
    const { rows } = await this.db.query("SELECT 1 FROM allowlists WHERE operation_id = $1", [operationId]);
    return rows.length > 0;
  }

  async find(collection: string): Promise<CollectionAllowlists> {
    const { rows } = await this.db.query<{
      root: string;
      entries: number;
      operation_id: string | null;
      created_at: Date | string;
      active: boolean;
    }>(
      `SELECT a.root, a.entries, a.operation_id, a.created_at, a.root = (${ACTIVE_ROOT}) AS active
       FROM allowlists a LEFT JOIN operations o ON o.id = a.operation_id
       WHERE a.chain_id = $1 AND a.address = $2 AND (a.root = (${ACTIVE_ROOT}) OR ${PENDING})
       ORDER BY a.created_at DESC`,
      [this.chainId, collection.toLowerCase()],
    );
    const view = (row: (typeof rows)[number]): StoredAllowlist => ({
      root: row.root,
      entries: Number(row.entries),
      operationId: row.operation_id,
      createdAt: new Date(row.created_at).toISOString(),
    });
    const active = rows.find((row) => row.active);
    const pending = rows.find((row) => !row.active);
    return { ...(active ? { active: view(active) } : {}), ...(pending ? { pending: view(pending) } : {}) };
  }

  /** `account`'s leaf in the list in force, and its proof, read from the stored nodes (no tree is rebuilt); undefined when not listed. */
  async leaf(collection: string, account: string): Promise<AllowlistLeaf | undefined> {
    const address = collection.toLowerCase();
    const { rows } = await this.db.query<{ allowance: string; price: string; tree_index: number; root: string }>(
      `SELECT e.allowance::text, e.price::text, e.tree_index, e.root FROM allowlist_entries e
       WHERE e.chain_id = $1 AND e.address = $2 AND e.root = (${ACTIVE_ROOT}) AND e.account = $3`,
      [this.chainId, address, getAddress(account).toLowerCase()],
    );
    const entry = rows[0];
    if (!entry) return undefined;
    const indices = proofIndices(Number(entry.tree_index));
    const { rows: nodes } = await this.db.query<{ node: string }>(
      `SELECT encode(substring(a.nodes FROM u.i * 32 + 1 FOR 32), 'hex') AS node
       FROM allowlists a, unnest($4::int[]) WITH ORDINALITY AS u(i, n)
       WHERE a.chain_id = $1 AND a.address = $2 AND a.root = $3 ORDER BY u.n`,
      [this.chainId, address, entry.root, indices],
    );
    return {
      allowance: BigInt(entry.allowance),
      price: BigInt(entry.price),
      proof: nodes.map((row) => `0x${row.node}`),
    };
  }
}
