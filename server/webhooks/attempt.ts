import type { AttemptLogEntry, ClaimedDelivery, FinishedAttempt } from "./outbox";
import { renderEventBody } from "./render";
import { retryDelayMs, type RetryPolicy } from "./retry";
import type { SecretSeal } from "./secret-seal";
import type { AttemptResult, DeliverySender } from "./sender";
import { stillSigning } from "./signing";

/** What an attempt came to: its record, and whether the receiver answered (null: no POST was made). */
export interface AttemptOutcome extends FinishedAttempt {
  delivery: ClaimedDelivery;
  answered: boolean | null;
  /** The POST was cut by the shutdown: not an attempt (the lease is given back). */
  cut: boolean;
}

export interface AttemptDeps {
  sender: DeliverySender;
  retry: RetryPolicy;
  /** Opens the endpoint's sealed secrets. */
  seal: SecretSeal;
  stopping(): boolean;
}

/**
 * One attempt at a claimed delivery: the body rendered, signed and POSTed (unsent when its endpoint
 * no longer takes the event). Never throws: an exception anywhere in it is a failed attempt with its
 * reason, retried with backoff and ended at the retry window like any other.
 */
export async function attemptDelivery(delivery: ClaimedDelivery, deps: AttemptDeps): Promise<AttemptOutcome> {
  const at = new Date().toISOString();
  const outcome = (entry: AttemptLogEntry, answered: boolean | null, final = false, delivered = false) => ({
    delivery,
    record: {
      entry,
      delivered,
      final,
      retryMs: retryDelayMs(deps.retry, delivery.attempts + 1),
      windowMs: deps.retry.windowMs,
    },
    answered,
    cut: false,
  });
  if (!delivery.taken) {
    const error = "the endpoint no longer takes this event (its access key was revoked or no longer reads it)";
    return outcome({ at, ms: 0, error }, null, true);
  }
  let result: AttemptResult;
  try {
    const body = renderEventBody(delivery);
    // Signed with the current secret, and each rotated out while it still signs (24 h after its rotation).
    const secrets = [delivery.secret, ...stillSigning(delivery.previousSecrets).map((p) => p.secret)];
    const opened = secrets.map((secret) => deps.seal.open(delivery.endpointId, secret));
    result = await deps.sender.post(delivery.endpointId, delivery.url, delivery.eventId, opened, body);
  } catch (err) {
    return outcome({ at, ms: 0, error: `the attempt failed: ${describe(err)}` }, null);
  }
  if (result.kind === "error") {
    return { ...outcome({ at, ms: result.ms, error: result.error }, false), cut: deps.stopping() };
  }
  const { status } = result;
  const delivered = status >= 200 && status < 300;
  const error = delivered ? undefined : status >= 300 && status < 400 ? "redirect not followed" : "non-2xx answer";
  return outcome({ at, ms: result.ms, status, ...(error ? { error } : {}) }, true, status === 410, delivered);
}

function describe(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 200);
}
