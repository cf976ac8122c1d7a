import {
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
  type RateLimiterAbstract,
} from "rate-limiter-flexible";
import type { SqlDriver } from "../db";

export interface UserRateLimits {
  /** Login calls per client address per hour; what X-Rate-Limit counts down. */
  callsPerHour: number;
  /** Failed logins from one client address, whatever the username, within `failureWindowMs`. */
  maxFailuresPerIp: number;
  /** Failed logins on one username from one client address within `failureWindowMs`. */
  maxFailuresPerUsernameAndIp: number;
  failureWindowMs: number;
  /** User creation requests (POST /v2/user, createWithList, createWithArray) per client address per window. */
  creationsPerWindow: number;
  creationWindowMs: number;
}

export const DEFAULT_USER_RATE_LIMITS: UserRateLimits = {
  callsPerHour: 1000,
  maxFailuresPerIp: 20,
  maxFailuresPerUsernameAndIp: 5,
  failureWindowMs: 15 * 60 * 1000,
  creationsPerWindow: 60,
  creationWindowMs: 60 * 1000,
};

const HOUR_MS = 60 * 60 * 1000;
/** The table of migration 3. */
const COUNTER_TABLE = "rate_limit_counters";

export type Admission = { allowed: true } | { allowed: false; retryAfterSeconds: number };
export type LoginAdmission = Admission & { callsLeft: number };

/**
 * The abuse limits of /v2/user, as fixed-window counters from rate-limiter-flexible. Login
 * failures count per (username, client address) and per client address, never per username
 * alone: a wrong password from one place must not lock the owner out everywhere.
 *
 * On a PostgreSQL server the counters live in the database (table rate_limit_counters), shared
 * by every instance on it and kept across restarts. On PGlite, or with no database, they live in
 * this process's memory: a PGlite database belongs to one process, so there is nothing to share,
 * and each counter update there is a logged write run on the event loop's thread (~9 ms a login
 * for the five updates, measured under load), time taken from the requests and the hashing.
 */
export class UserRateLimiter {
  private readonly loginCalls: RateLimiterAbstract;
  private readonly ipFailures: RateLimiterAbstract;
  private readonly userFailures: RateLimiterAbstract;
  private readonly creations: RateLimiterAbstract;

  constructor(
    readonly limits: UserRateLimits = DEFAULT_USER_RATE_LIMITS,
    database?: SqlDriver,
  ) {
    const shared = database?.backend === "postgres" ? database : undefined;
    const counter = (keyPrefix: string, points: number, windowMs: number): RateLimiterAbstract => {
      const options = { keyPrefix, points, duration: windowMs / 1000 };
      if (!shared) return new RateLimiterMemory(options);
      return new RateLimiterPostgres({
        ...options,
        // pg's query({ text, values }) over the service's driver, so its errors come out
        // sanitized like every other query's. The table is migration 3's.
        storeClient: { query: (q: { text: string; values?: unknown[] }) => shared.query(q.text, q.values) },
        storeType: "pool",
        tableName: COUNTER_TABLE,
        tableCreated: true,
      });
    };
    this.loginCalls = counter("login_calls", limits.callsPerHour, HOUR_MS);
    this.ipFailures = counter("login_failures_ip", limits.maxFailuresPerIp, limits.failureWindowMs);
    this.userFailures = counter("login_failures_user", limits.maxFailuresPerUsernameAndIp, limits.failureWindowMs);
    this.creations = counter("user_creations", limits.creationsPerWindow, limits.creationWindowMs);
  }

  /**
   * Counts one login call from `ip`, and counts it as a failure in advance (for `ip`, and for
   * `username` from `ip` when given): concurrent guesses then cannot all pass a check made
   * before any of them failed. loginSucceeded takes the advance back. (The price: more
   * simultaneous logins of one username from one address than its failure limit get 429 for
   * the excess, right password or not.)
   */
  async admitLogin(ip: string, username: string | undefined): Promise<LoginAdmission> {
    const [calls, ...failures] = await Promise.all([
      count(this.loginCalls, ip),
      count(this.ipFailures, ip),
      ...(username === undefined ? [] : [count(this.userFailures, userKey(ip, username))]),
    ]);
    return { ...verdict([calls, ...failures]), callsLeft: calls.res.remainingPoints };
  }

  /** The password was right: the advance on `ip` is taken back, and the pair's failures cleared. */
  async loginSucceeded(ip: string, username: string): Promise<void> {
    await Promise.all([this.ipFailures.reward(ip, 1), this.userFailures.delete(userKey(ip, username))]);
  }

  /** Counts one user creation request from `ip`. */
  async admitCreation(ip: string): Promise<Admission> {
    return verdict([await count(this.creations, ip)]);
  }
}

/** Usernames are [A-Za-z0-9._-] and addresses have no "|": the pair key is unambiguous. */
function userKey(ip: string, username: string): string {
  return `${ip}|${username}`;
}

interface Count {
  res: RateLimiterRes;
  /** This point went over the counter's limit. */
  limited: boolean;
}

/** Consumes one point and answers the counter's state (over the limit, the library rejects with it). */
async function count(limiter: RateLimiterAbstract, key: string): Promise<Count> {
  try {
    return { res: await limiter.consume(key, 1), limited: false };
  } catch (res) {
    if (res instanceof RateLimiterRes) return { res, limited: true };
    throw res; // the store failed: a 500, not a silently open door
  }
}

function verdict(counts: Count[]): Admission {
  const limited = counts.filter((c) => c.limited);
  if (limited.length === 0) return { allowed: true };
  const waitMs = Math.max(...limited.map((c) => c.res.msBeforeNext));
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
}
