import { Pkcs11SignerError } from "./errors";

/**
 * A fixed set of PKCS#11 sessions lent one at a time: a session is not safe to use from two threads,
 * and a sign or find is several calls that must not interleave, so each borrower has one to itself
 * until its work settles. Borrowers beyond the pool's size wait in order.
 */
export class SessionPool<Session> {
  private readonly idle: Session[];
  private readonly waiting: Array<(session: Session) => void> = [];
  /** Borrowers holding a session or waiting for one. */
  private lent = 0;
  private closing?: { resolve: () => void; promise: Promise<void> };

  constructor(
    sessions: Session[],
    private readonly describe: string,
  ) {
    this.idle = [...sessions];
  }

  async use<T>(work: (session: Session) => T | Promise<T>): Promise<T> {
    const session = await this.take();
    try {
      return await work(session);
    } finally {
      this.give(session);
    }
  }

  /** Waits until every lent session is back, then hands all of them over (to be closed); later `use` calls fail. */
  async drain(): Promise<Session[]> {
    if (!this.closing) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.closing = { resolve, promise };
      if (this.lent === 0) resolve();
    }
    await this.closing.promise;
    return this.idle.splice(0);
  }

  private take(): Promise<Session> {
    if (this.closing) return Promise.reject(new Pkcs11SignerError("TOKEN_CLOSED", `${this.describe} is closed`));
    this.lent += 1;
    const session = this.idle.pop();
    if (session !== undefined) return Promise.resolve(session);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private give(session: Session): void {
    this.lent -= 1;
    const next = this.waiting.shift();
    if (next) {
      next(session);
      return;
    }
    this.idle.push(session);
    if (this.closing && this.lent === 0) this.closing.resolve();
  }
}
