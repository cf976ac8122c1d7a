/**
 * What the node's `finalized` block says, and when it is worth asking (the follower asks it):
 * - a node whose `finalized` is its head (a `hardhat node`) has no such block: FINALITY_BLOCKS
 *   deep counts instead, and it is never asked again;
 * - one that trails its head (anvil by 64 blocks, a public chain by an epoch or two) is asked at a
 *   new head only once the lowest operation's block may have reached it, by the least lag seen:
 *   not once a block for as long as an operation waits.
 */
export class FinalityTag {
  /** Set once the node's `finalized` block proved to be its head (a dev chain): FINALITY_BLOCKS then. */
  private noTag = false;
  /** The node's last `finalized` block, where it has one behind its head. */
  private last?: number;
  /** The least the node's `finalized` block has trailed its head. */
  private lag?: number;

  constructor(private readonly finalityBlocks: number) {}

  /**
   * The highest block taken as final at `head`. `ask` reads the node's `finalized` block number
   * (null when it has none); it is called only when an operation has a block (the lowest,
   * `lowestMined`) that the answer may make final.
   */
  async height(head: number, lowestMined: number | undefined, ask: () => Promise<number | null>): Promise<number> {
    const byDepth = head - this.finalityBlocks;
    const worthAsking = lowestMined !== undefined && (this.lag === undefined || head - this.lag >= lowestMined);
    if (this.noTag || !worthAsking) return this.last ?? byDepth;
    let finalized: number | null;
    try {
      finalized = await ask();
    } catch {
      return this.last ?? byDepth;
    }
    if (finalized === null || finalized >= head) {
      this.noTag = true; // a dev chain answers its head: nothing there is final by that
      this.last = undefined;
      return byDepth;
    }
    this.last = finalized;
    // Genesis as finalized says only that the chain is younger than its lag.
    if (finalized > 0) this.lag = Math.min(this.lag ?? head, head - finalized);
    return finalized;
  }
}
