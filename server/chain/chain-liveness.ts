/** How long a head question may go unanswered before the chain is taken as down: half RPC_TIMEOUT_MS's default, well above a loaded node's slowest head answer. */
export const LIVENESS_GRACE_MS = 2_500;

/** A head as the store's reads show it: the last one known, and whether the chain answers now. */
export interface KnownHead {
  /** The last head the chain answered (null if it has answered none since the start). */
  blockNumber: number | null;
  down: boolean;
}

/**
 * Whether a chain answers, known without waiting on it (API.md "A chain that is down"): what the
 * store answers alone keeps answering at once while its chain is down, with the last head known.
 * Every head question watched here (the block feed's polls, /health's pings, the reads' own) says
 * so: one that failed, or one unanswered past `graceMs`, makes the chain down until one answers.
 */
export class ChainLiveness {
  private lastHead: number | null = null;
  private failed = false;
  /** When the oldest unanswered question was asked. */
  private waitingSince?: number;
  private asking?: Promise<number>;

  constructor(
    private readonly ask: () => Promise<number>,
    private readonly graceMs = LIVENESS_GRACE_MS,
  ) {}

  /** Whether the chain is down now, by the questions already asked: no wait, no call. */
  get down(): boolean {
    return this.failed || (this.waitingSince !== undefined && Date.now() - this.waitingSince > this.graceMs);
  }

  /** The last head the chain answered. */
  get head(): number | null {
    return this.lastHead;
  }

  /** Follows one head question: its answer or failure says whether the chain answers. */
  watch(question: Promise<number>): Promise<number> {
    this.waitingSince ??= Date.now();
    question.then(
      (head) => {
        this.lastHead = head;
        this.failed = false;
        this.waitingSince = undefined;
      },
      () => {
        this.failed = true;
        this.waitingSince = undefined;
      },
    );
    return question;
  }

  /**
   * The head now, if the chain answers within what is left of the grace; else, at once, the last
   * head known and `down`. One question in flight at a time, shared by concurrent reads.
   */
  async now(): Promise<KnownHead> {
    const asking = this.asking ?? this.askOnce();
    if (this.down) return { blockNumber: this.lastHead, down: true };
    const left = this.graceMs - (Date.now() - (this.waitingSince ?? Date.now()));
    let timer: NodeJS.Timeout | undefined;
    const head = await Promise.race([
      asking.catch(() => undefined),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), Math.max(0, left)))),
    ]);
    clearTimeout(timer);
    return head === undefined ? { blockNumber: this.lastHead, down: true } : { blockNumber: head, down: false };
  }

  private askOnce(): Promise<number> {
    const asking = this.watch(this.ask());
    this.asking = asking;
    const done = () => {
      if (this.asking === asking) this.asking = undefined;
    };
    asking.then(done, done);
    return asking;
  }
}
