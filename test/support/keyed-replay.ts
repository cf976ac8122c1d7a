import { sleep, type ApiClient } from "../api/harness";

/** A keyed write as a burst sent it: its Idempotency-Key and its body. */
export interface KeyedWrite {
  key: string;
  body: Record<string, unknown>;
}

/**
 * Replays every keyed write until each answers 200, or throws after `withinMs`. A key never recorded
 * before a kill runs anew, and is answered like any write.
 */
export async function replayUntilConfirmed(
  api: ApiClient,
  writes: KeyedWrite[],
  path = "/nft/mint",
  withinMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  let waiting = writes;
  while (waiting.length > 0) {
    if (Date.now() > deadline) {
      throw new Error(
        `${waiting.length} keys still not 200 ${withinMs / 1000} s after the last restart (first: ${waiting[0].key})`,
      );
    }
    const answers = await Promise.all(
      waiting.map((item) => api.post(path, item.body, { "Idempotency-Key": item.key })),
    );
    waiting = waiting.filter((_, i) => answers[i].status !== 200);
    if (waiting.length > 0) await sleep(500);
  }
}
