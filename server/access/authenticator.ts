import { createHash, timingSafeEqual } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { Logger } from "../http/logger";
import { principalOf, type AccessKeyStore } from "./access-key-store";
import { ROOT_PRINCIPAL, type AccessPrincipal } from "./principal";
import { ACCESS_KEY_PREFIX, accessKeyHash } from "./secrets";

/**
 * How long a key's lookup is trusted: a revocation on one instance reaches every other within
 * this (well inside API.md's 1 s), while a busy key costs one store read per interval, not per request.
 */
export const KEY_CACHE_MS = 500;
/** How often a key's lastUsedAt is written at most. */
const TOUCH_EVERY_MS = 60_000;

/** Turns a presented secret into a principal: the root key, a live access key, or nothing. */
export class Authenticator {
  private readonly rootDigest?: Buffer;
  /** Keyed by secret hash; misses cached too, so guessing costs the store nothing. Bounded. */
  private readonly cache = new LRUCache<string, { principal: AccessPrincipal | null }>({
    max: 10_000,
    ttl: KEY_CACHE_MS,
  });
  private readonly lookups = new Map<string, Promise<AccessPrincipal | null>>();
  private readonly touchedAt = new Map<string, number>();

  constructor(
    private readonly store: AccessKeyStore,
    rootKey: string | undefined,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    if (rootKey) this.rootDigest = digest(rootKey);
  }

  /** The principal of `secret`, or null for an unknown, revoked or expired key. */
  async authenticate(secret: string): Promise<AccessPrincipal | null> {
    // Constant time against the root key: neither its content nor its length leaks.
    if (this.rootDigest && timingSafeEqual(digest(secret), this.rootDigest)) return ROOT_PRINCIPAL;
    if (!secret.startsWith(ACCESS_KEY_PREFIX)) return null;
    const hash = accessKeyHash(secret);
    const principal = await this.lookup(hash);
    if (!principal) return null;
    if (principal.expiresAt && principal.expiresAt.getTime() <= this.now()) return null;
    this.touch(principal.keyId!);
    return principal;
  }

  /** Forgets what this process cached, after a revocation here (other instances: KEY_CACHE_MS). */
  forgetAll(): void {
    this.cache.clear();
  }

  private lookup(hash: string): Promise<AccessPrincipal | null> {
    const cached = this.cache.get(hash);
    if (cached) return Promise.resolve(cached.principal);
    let pending = this.lookups.get(hash);
    if (!pending) {
      pending = this.store
        .findBySecretHash(hash)
        .then((key) => {
          const principal = key ? principalOf(key) : null;
          this.cache.set(hash, { principal });
          return principal;
        })
        .finally(() => this.lookups.delete(hash));
      this.lookups.set(hash, pending);
    }
    return pending;
  }

  /** Records lastUsedAt in the background, at most once a minute per key. */
  private touch(keyId: string): void {
    const now = this.now();
    if (now - (this.touchedAt.get(keyId) ?? 0) < TOUCH_EVERY_MS) return;
    this.touchedAt.set(keyId, now);
    this.store.touch([keyId], new Date(now)).catch((err: unknown) => {
      this.logger.warn({ err: { message: (err as Error).message } }, "recording an access key's last use failed");
    });
  }
}

const digest = (value: string) => createHash("sha256").update(value).digest();
