/**
 * When to ask for the head next, from when the last new heads arrived: pure, so that it is tested
 * alone (test/unit/block-timing.test.ts). A chain that makes blocks at a steady interval is asked
 * just before its next block is due and then quickly until it comes, instead of every BLOCK_POLL_MS;
 * a chain whose blocks come at no steady pace (a dev chain that mines on demand) is asked every
 * BLOCK_POLL_MS as before.
 */

/** Arrivals kept to judge the pace. */
export const ARRIVALS_KEPT = 9;
/** The steady pace: the longest of the recent intervals is at most this many times the shortest. */
const STEADY_SPREAD = 1.6;
/** Quick polls once a block is due: this fraction of the interval, within [MIN_QUICK_MS, pollMs]. */
const QUICK_FRACTION = 1 / 20;
const MIN_QUICK_MS = 40;

/** The chain's steady block interval in ms, from arrival times (ms, oldest first, one new head each); undefined when unsteady. */
export function steadyInterval(arrivals: readonly number[]): number | undefined {
  if (arrivals.length < 4) return undefined;
  const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]);
  const sorted = [...gaps].sort((a, b) => a - b);
  if (sorted[0] <= 0 || sorted[sorted.length - 1] > sorted[0] * STEADY_SPREAD) return undefined;
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * How long to wait before the next head poll, `now` ms after the last new head arrived at
 * `lastArrival`: until the next block is due (less a quick poll's worth), then a quick poll at a
 * time; past two intervals without a block, BLOCK_POLL_MS again.
 */
export function nextPollDelay(arrivals: readonly number[], now: number, pollMs: number): number {
  const interval = steadyInterval(arrivals);
  if (interval === undefined || interval <= pollMs) return pollMs;
  const quick = Math.min(pollMs, Math.max(MIN_QUICK_MS, Math.round(interval * QUICK_FRACTION)));
  const since = now - arrivals[arrivals.length - 1];
  if (since > 2 * interval) return pollMs;
  return Math.max(quick, interval - quick - since);
}
