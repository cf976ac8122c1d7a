import type { NonceSeed } from "./nonce-allocator";

/**
 * Who may hold nonce n of an address on this chain now: the one place that answers it (issue 51).
 *
 * A nonce is held by the operation whose row records it while the operation is unfinished (or not
 * yet final: a reorg may need it again), and, between its take and that record, by whoever took
 * it in this process: a new write, a re-sign (of the request path or the follower) or a nonce
 * fill. Every one of them holds it here from its take to its record and broadcast, so every
 * question of "is n free" sees all of them; the rules that answer those questions are the pure
 * functions below. Across processes (PostgreSQL), and for a take this process could not see in
 * time, the store's constraint is the backstop (migration 33): a second row recording a nonce an
 * unfinished operation holds, or a transaction hash another operation holds, is refused
 * (NonceTaken), and its writer takes another nonce without giving this one back.
 */
export class NonceHolders {
  private readonly held = new Map<string, { address: string; nonce: number; done: Promise<void>; end: () => void }>();

  constructor(
    /** The nonces of `address` that unfinished operations record in the store, lowest first. */
    private readonly recorded: (address: string, below?: number) => Promise<number[]>,
  ) {}

  /** Holds `nonce` of `address` for operation `id` (replacing what the operation held before). */
  hold(id: string, address: string, nonce: number): void {
    this.release(id);
    let end = () => {};
    const done = new Promise<void>((resolve) => (end = resolve));
    this.held.set(id, { address, nonce, done, end });
  }

  has(id: string): boolean {
    return this.held.has(id);
  }

  release(id: string): void {
    const entry = this.held.get(id);
    if (!entry) return;
    this.held.delete(id);
    entry.end();
  }

  /**
   * Every nonce of `address` held now (below `below` when given), lowest first: recorded by an
   * unfinished operation, or held here between a take and its record. `except` leaves one
   * operation out: its hold here, and its own row's nonce once.
   */
  async heldNonces(
    address: string,
    { below, except }: { below?: number; except?: { id: string; nonce: number } } = {},
  ) {
    const recorded = await this.recorded(address, below);
    if (except) {
      const own = recorded.indexOf(except.nonce);
      if (own >= 0) recorded.splice(own, 1);
    }
    for (const [id, entry] of this.held)
      if (id !== except?.id && entry.address === address && (below === undefined || entry.nonce < below))
        recorded.push(entry.nonce);
    return [...new Set(recorded)].sort((a, b) => a - b);
  }

  /**
   * Settles when every nonce of `address` below `nonce` held here now is released (or after
   * `timeoutMs`, when given); false if none was held.
   */
  async lowerReleased(address: string, nonce: number, timeoutMs?: number): Promise<boolean> {
    const lower = [...this.held.values()].filter((entry) => entry.address === address && entry.nonce < nonce);
    if (lower.length === 0) return false;
    const released = Promise.all(lower.map((entry) => entry.done));
    if (timeoutMs === undefined) await released;
    else {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([released, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    }
    return true;
  }
}

/**
 * Where an address starts in a process: past the chain's pending count and every nonce held; the
 * nonces in between that none holds are free (a write killed between its take and its record left
 * them), at most `maxFree` of them.
 */
export function seedOf(pending: number, held: readonly number[], maxFree: number): NonceSeed {
  const heldSet = new Set(held);
  const highest = held.length > 0 ? Math.max(...held) : -1;
  const free: number[] = [];
  for (let nonce = pending; nonce < highest && free.length < maxFree; nonce++)
    if (!heldSet.has(nonce)) free.push(nonce);
  return { next: Math.max(pending, highest + 1), free };
}

/**
 * The nonces from the chain's `chainNonce` up to `below` (at most `max`) that nobody holds: a
 * 0-value fill may take them. A held one is its holder's to send, never a fill's.
 */
export function unheldBetween(chainNonce: number, below: number, held: readonly number[], max: number): number[] {
  const heldSet = new Set(held);
  const gaps: number[] = [];
  for (let nonce = chainNonce; nonce < below && nonce < chainNonce + max; nonce++)
    if (!heldSet.has(nonce)) gaps.push(nonce);
  return gaps;
}

/**
 * Whether the counter of an address may start again at the chain's `pending` count (a reset chain,
 * or takes of a process killed before it recorded them): only when nobody else holds a nonce from
 * there up. One held there would be handed out a second time.
 */
export function mayStartAgainAt(pending: number, othersHeld: readonly number[]): boolean {
  return othersHeld.every((nonce) => nonce < pending);
}
