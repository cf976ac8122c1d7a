export interface LoginRateLimits {
  /** Login calls per client IP per hour; what X-Rate-Limit counts down. */
  callsPerHour: number;
  /** Failed logins from one client IP within `failureWindowMs` before it gets 429. */
  maxFailuresPerIp: number;
  /** Failed logins on one username (from anywhere) within `failureWindowMs` before it gets 429. */
  maxFailuresPerUsername: number;
  failureWindowMs: number;
}

export const DEFAULT_LOGIN_RATE_LIMITS: LoginRateLimits = {
  callsPerHour: 1000,
  maxFailuresPerIp: 20,
  maxFailuresPerUsername: 5,
  failureWindowMs: 15 * 60 * 1000,
};

const HOUR_MS = 60 * 60 * 1000;
/** Bound on tracked keys, so a flood of distinct usernames cannot grow memory without end. */
const MAX_KEYS = 100_000;

interface Window {
  startedAt: number;
  count: number;
}

export type LoginAdmission =
  { allowed: true; callsLeft: number } | { allowed: false; retryAfterSeconds: number; callsLeft: number };

/**
 * Fixed-window counters in this process's memory. Good for one instance (the demo); several
 * instances behind a balancer would each count separately — move the counters to the database
 * or Redis then. Fixed windows may let through up to twice a limit around a window boundary,
 * which is fine for slowing password guessing, the purpose here.
 */
export class LoginRateLimiter {
  private readonly calls = new Map<string, Window>();
  private readonly failures = new Map<string, Window>();

  constructor(
    readonly limits: LoginRateLimits = DEFAULT_LOGIN_RATE_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one login call from `ip` and says whether it may proceed. */
  admit(ip: string, username: string | undefined): LoginAdmission {
    const now = this.now();
    const calls = this.bump(this.calls, `ip:${ip}`, HOUR_MS, now);
    const callsLeft = Math.max(0, this.limits.callsPerHour - calls.count);
    const waits: number[] = [];
    if (calls.count > this.limits.callsPerHour) waits.push(calls.startedAt + HOUR_MS - now);
    const ipFailures = this.current(this.failures, `ip:${ip}`, this.limits.failureWindowMs, now);
    if (ipFailures && ipFailures.count >= this.limits.maxFailuresPerIp) {
      waits.push(ipFailures.startedAt + this.limits.failureWindowMs - now);
    }
    const userFailures =
      username === undefined
        ? undefined
        : this.current(this.failures, `user:${username}`, this.limits.failureWindowMs, now);
    if (userFailures && userFailures.count >= this.limits.maxFailuresPerUsername) {
      waits.push(userFailures.startedAt + this.limits.failureWindowMs - now);
    }
    if (waits.length === 0) return { allowed: true, callsLeft };
    return { allowed: false, callsLeft, retryAfterSeconds: Math.max(1, Math.ceil(Math.max(...waits) / 1000)) };
  }

  /**
   * Counts a failed login against the IP and the username. Unknown usernames count the same as
   * known ones, or the lockout itself would tell which usernames exist.
   */
  recordFailure(ip: string, username: string | undefined): void {
    const now = this.now();
    this.bump(this.failures, `ip:${ip}`, this.limits.failureWindowMs, now);
    if (username !== undefined) this.bump(this.failures, `user:${username}`, this.limits.failureWindowMs, now);
  }

  /** A correct password clears the username's failures (not the IP's). */
  recordSuccess(username: string): void {
    this.failures.delete(`user:${username}`);
  }

  private current(map: Map<string, Window>, key: string, windowMs: number, now: number): Window | undefined {
    const window = map.get(key);
    return window && now - window.startedAt < windowMs ? window : undefined;
  }

  private bump(map: Map<string, Window>, key: string, windowMs: number, now: number): Window {
    let window = this.current(map, key, windowMs, now);
    if (!window) {
      window = { startedAt: now, count: 0 };
      map.delete(key); // re-insert so Map order stays oldest-first
      map.set(key, window);
      if (map.size > MAX_KEYS) this.evict(map, windowMs, now);
    }
    window.count += 1;
    return window;
  }

  private evict(map: Map<string, Window>, windowMs: number, now: number): void {
    for (const [key, window] of map) {
      if (map.size <= MAX_KEYS / 2) break;
      if (now - window.startedAt >= windowMs || map.size > MAX_KEYS) map.delete(key);
    }
  }
}
