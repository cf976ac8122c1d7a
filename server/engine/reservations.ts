/**
 * The nonces this process has taken and not yet broadcast (or given up on), by address. A node that
 * refuses nonce gaps (an automining one) answers "nonce too high" to a transaction that overtook a
 * lower one still being signed or sent here: that transaction waits for these, then goes again.
 */
export class NonceReservations {
  private readonly held = new Map<string, { address: string; nonce: number; done: Promise<void>; end: () => void }>();

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

  /** The nonces of `address` held now by operations other than `exceptId`. */
  noncesOf(address: string, exceptId: string): number[] {
    return [...this.held].filter(([id, entry]) => id !== exceptId && entry.address === address).map(([, e]) => e.nonce);
  }

  /** Settles when every nonce of `address` below `nonce` held now is released; false if none was. */
  async lowerReleased(address: string, nonce: number): Promise<boolean> {
    const lower = [...this.held.values()].filter((entry) => entry.address === address && entry.nonce < nonce);
    if (lower.length === 0) return false;
    await Promise.all(lower.map((entry) => entry.done));
    return true;
  }
}
