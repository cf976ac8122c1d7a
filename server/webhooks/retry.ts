/** When deliveries are tried again (API.md: exponential backoff with jitter for at least 24 h). */
export interface RetryPolicy {
  /** The first retry waits about this long; each next one twice as long. */
  baseMs: number;
  /** No wait between two attempts is longer than this. */
  capMs: number;
  /** After an attempt fails this long after the first, the delivery is marked failed. */
  windowMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 5_000, capMs: 3_600_000, windowMs: 24 * 3_600_000 };

/**
 * The wait after the `attempts`-th failed attempt: base x 2^(attempts-1), capped, then "equal
 * jitter" (between half and all of it) so that receivers coming back up are not hit in step.
 */
export function retryDelayMs(policy: RetryPolicy, attempts: number, random = Math.random): number {
  const exponential = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(attempts - 1, 40));
  return Math.round(exponential / 2 + (random() * exponential) / 2);
}
