import type { ChainClient } from "./chain-client";

/**
 * What `read` answers within `ms`: undefined when it fails or is slower (it goes on, unawaited), so
 * that a read the store answers otherwise is never held by a slow chain.
 */
export async function answerWithin<T>(read: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([read.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

const MAX_KEPT = 10_000;

/**
 * Answers that never change once read (a token's symbol, a collection's max supply), kept per chain
 * client and key: another client of the same chain id (a dev chain started again, a test's own
 * chain at the same addresses) asks again, and a failed read (the chain down) is asked again next time.
 */
export class KeptReads<T> {
  private readonly byChain = new WeakMap<ChainClient, Map<string, Promise<T>>>();

  get(chain: ChainClient, key: string, read: () => Promise<T>): Promise<T> {
    const kept = this.keptFor(chain);
    const found = kept.get(key);
    if (found) return found;
    const reading = read();
    reading.catch(() => kept.delete(key));
    if (kept.size >= MAX_KEPT) kept.clear();
    kept.set(key, reading);
    return reading;
  }

  private keptFor(chain: ChainClient): Map<string, Promise<T>> {
    let kept = this.byChain.get(chain);
    if (!kept) this.byChain.set(chain, (kept = new Map()));
    return kept;
  }
}
