import type { SqlDriver } from "../db";

/**
 * Hands out the nonces of each address. Nonces whose transaction was never broadcast come back
 * through `recycle` and are handed out again, lowest first, before new ones; the follower fills
 * those that no write takes. `seed` reads where an address starts in this process (NonceSeed): a
 * counter never stays above a gap that nothing will fill.
 */
/**
 * Where an address starts in this process: `next` past everything on chain, in the mempool and
 * held by an unfinished operation; `free`, the nonces below it that none of those holds (a process
 * killed between taking a nonce and recording it leaves one), handed out first.
 */
export interface NonceSeed {
  next: number;
  free: number[];
}

export interface NonceAllocator {
  take(address: string, seed: () => Promise<NonceSeed>): Promise<number>;
  recycle(address: string, nonce: number): Promise<void>;
  /** The chain is ahead of us (another sender, a refused "nonce too low"): never hand out below `next`. */
  raiseTo(address: string, next: number): Promise<void>;
  /**
   * The chain is behind us and nothing of ours is in between (a reset chain, or nonces taken by a
   * process killed before it recorded them): start again at `next`, forgetting recycled ones. Only
   * while the counter stands at `ifNext` (no nonce was handed out since the caller's): one handed out
   * meanwhile would be handed out again, and the same call signed at the same nonce is the same
   * transaction (two writes answered by one mint). Answers whether it did.
   */
  resetTo(address: string, next: number, ifNext: number): Promise<boolean>;
  /** Takes back a recycled nonce for a fill, if it is still recycled (false when a write took it). */
  claimRecycled(address: string, nonce: number): Promise<boolean>;
  /** Recycled nonces waiting, by address. */
  recycled(): Promise<Array<{ address: string; nonce: number }>>;
}

/** Nonces in this process's memory: PGlite's data directory has one process, so nothing else signs. */
export class MemoryNonceAllocator implements NonceAllocator {
  private readonly next = new Map<string, number>();
  private readonly seeding = new Map<string, Promise<number>>();
  private readonly returned = new Map<string, Set<number>>();

  async take(address: string, seed: () => Promise<NonceSeed>): Promise<number> {
    if (!this.next.has(address)) {
      // Concurrent first writes of an address share one seed read.
      let seeding = this.seeding.get(address);
      if (!seeding) {
        seeding = seed().then((seeded) => {
          this.seeding.delete(address);
          if (!this.next.has(address)) {
            this.next.set(address, seeded.next);
            for (const nonce of seeded.free) void this.recycle(address, nonce);
          }
          return seeded.next;
        });
        seeding.catch(() => this.seeding.delete(address));
        this.seeding.set(address, seeding);
      }
      await seeding;
    }
    const returned = this.returned.get(address);
    if (returned && returned.size > 0) {
      const lowest = Math.min(...returned);
      returned.delete(lowest);
      return lowest;
    }
    const nonce = this.next.get(address)!;
    this.next.set(address, nonce + 1);
    return nonce;
  }

  async recycle(address: string, nonce: number): Promise<void> {
    if (!this.returned.has(address)) this.returned.set(address, new Set());
    this.returned.get(address)!.add(nonce);
  }

  async raiseTo(address: string, next: number): Promise<void> {
    this.next.set(address, Math.max(this.next.get(address) ?? 0, next));
    this.dropRecycledBelow(address, next);
  }

  async resetTo(address: string, next: number, ifNext: number): Promise<boolean> {
    if (this.next.get(address) !== ifNext) return false;
    this.next.set(address, next);
    this.returned.delete(address);
    return true;
  }

  async claimRecycled(address: string, nonce: number): Promise<boolean> {
    return this.returned.get(address)?.delete(nonce) ?? false;
  }

  async recycled(): Promise<Array<{ address: string; nonce: number }>> {
    return [...this.returned].flatMap(([address, nonces]) => [...nonces].map((nonce) => ({ address, nonce })));
  }

  private dropRecycledBelow(address: string, next: number): void {
    const returned = this.returned.get(address);
    if (returned) for (const nonce of returned) if (nonce < next) returned.delete(nonce);
  }
}

/**
 * Nonces in PostgreSQL, so that any number of service processes can sign with the same key: a
 * row per (chain, address) incremented under its row lock, and a table of recycled nonces taken
 * with SKIP LOCKED. Takes of one address asked for in the same turn of the event loop are served
 * together (recycled ones first, then one increment by the rest): a burst of 200 writes moves the
 * row once instead of queueing 200 transactions on its lock.
 */
export class SqlNonceAllocator implements NonceAllocator {
  private readonly waiting = new Map<string, Array<{ resolve(nonce: number): void; reject(err: unknown): void }>>();

  constructor(
    private readonly db: SqlDriver,
    private readonly chainId: string,
  ) {}

  take(address: string, seed: () => Promise<NonceSeed>): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      let waiting = this.waiting.get(address);
      if (!waiting) {
        waiting = [];
        this.waiting.set(address, waiting);
        setImmediate(() => void this.serve(address, seed));
      }
      waiting.push({ resolve, reject });
    });
  }

  private async serve(address: string, seed: () => Promise<NonceSeed>): Promise<void> {
    const waiting = this.waiting.get(address) ?? [];
    this.waiting.delete(address);
    try {
      const nonces = await this.takeMany(address, waiting.length, seed);
      waiting.forEach((w, i) => w.resolve(nonces[i]));
    } catch (err) {
      for (const w of waiting) w.reject(err);
    }
  }

  /** `count` nonces of `address`, lowest first: recycled ones, then new ones. */
  private async takeMany(address: string, count: number, seed: () => Promise<NonceSeed>): Promise<number[]> {
    const reused = await this.db.query<{ nonce: string }>(
      `DELETE FROM recycled_nonces WHERE (chain_id, address, nonce) IN (
         SELECT chain_id, address, nonce FROM recycled_nonces WHERE chain_id = $1 AND address = $2
         ORDER BY nonce LIMIT $3 FOR UPDATE SKIP LOCKED)
       RETURNING nonce::text AS nonce`,
      [this.chainId, address, count],
    );
    const nonces = reused.rows.map((row) => Number(row.nonce)).sort((a, b) => a - b);
    const fresh = count - nonces.length;
    if (fresh === 0) return nonces;
    let first = await this.increment(address, fresh);
    if (first === null) {
      // The address's first take on this database makes its row from the seed. Only the process
      // whose insert made it hands the seed's free nonces out: a nonce of a row that already exists
      // may be held by another process between its take and its record, and the same call signed at
      // the same nonce is the same transaction. Gaps below an existing row are the follower's to fill.
      const seeded = await seed();
      const made = await this.db.query(
        "INSERT INTO nonces (chain_id, address, next_nonce) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1",
        [this.chainId, address, seeded.next],
      );
      if (made.rows.length > 0 && seeded.free.length > 0) {
        for (const nonce of seeded.free) await this.recycle(address, nonce);
        for (const nonce of nonces) await this.recycle(address, nonce); // the lowest go first
        return this.takeMany(address, count, seed);
      }
      first = await this.increment(address, fresh);
      if (first === null) throw new Error(`No nonce row for ${address}`);
    }
    for (let i = 0; i < fresh; i++) nonces.push(first + i);
    return nonces;
  }

  /** Moves the address's next nonce `count` further; answers the first of those taken. */
  private async increment(address: string, count: number): Promise<number | null> {
    const { rows } = await this.db.query<{ nonce: string }>(
      `UPDATE nonces SET next_nonce = next_nonce + $3 WHERE chain_id = $1 AND address = $2
       RETURNING (next_nonce - $3)::text AS nonce`,
      [this.chainId, address, count],
    );
    return rows.length > 0 ? Number(rows[0].nonce) : null;
  }

  async recycle(address: string, nonce: number): Promise<void> {
    await this.db.query(
      "INSERT INTO recycled_nonces (chain_id, address, nonce) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
      [this.chainId, address, nonce],
    );
  }

  async raiseTo(address: string, next: number): Promise<void> {
    await this.db.query(
      `INSERT INTO nonces (chain_id, address, next_nonce) VALUES ($1, $2, $3)
       ON CONFLICT (chain_id, address) DO UPDATE SET next_nonce = GREATEST(nonces.next_nonce, $3)`,
      [this.chainId, address, next],
    );
    await this.db.query("DELETE FROM recycled_nonces WHERE chain_id = $1 AND address = $2 AND nonce < $3", [
      this.chainId,
      address,
      next,
    ]);
  }

  async resetTo(address: string, next: number, ifNext: number): Promise<boolean> {
    const { rowCount } = await this.db.query(
      "UPDATE nonces SET next_nonce = $3 WHERE chain_id = $1 AND address = $2 AND next_nonce = $4",
      [this.chainId, address, next, ifNext],
    );
    if (rowCount === 0) return false;
    await this.db.query("DELETE FROM recycled_nonces WHERE chain_id = $1 AND address = $2", [this.chainId, address]);
    return true;
  }

  async claimRecycled(address: string, nonce: number): Promise<boolean> {
    const { rowCount } = await this.db.query(
      "DELETE FROM recycled_nonces WHERE chain_id = $1 AND address = $2 AND nonce = $3",
      [this.chainId, address, nonce],
    );
    return rowCount > 0;
  }

  async recycled(): Promise<Array<{ address: string; nonce: number }>> {
    const { rows } = await this.db.query<{ address: string; nonce: string }>(
      "SELECT address, nonce::text AS nonce FROM recycled_nonces WHERE chain_id = $1 ORDER BY address, nonce",
      [this.chainId],
    );
    return rows.map((row) => ({ address: row.address, nonce: Number(row.nonce) }));
  }
}
