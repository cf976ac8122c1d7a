import type { SqlExecutor } from "../db";
import type { AuditLog } from "../access";
import type { Logger } from "../http/logger";
import type { WebhookEndpointStore } from "./endpoint-store";
import type { WebhookMetrics } from "./metrics";
import type { ClaimedDelivery, DeliveryStatus, FinishedAttempt, OutboxStore, RecordedDelivery } from "./outbox";

/** What the recorder uses of the worker's parts (the worker hands it its own). */
export interface OutcomeRecorderDeps {
  outbox: OutboxStore;
  endpoints: WebhookEndpointStore;
  audit: AuditLog;
  logger: Logger;
  metrics?: WebhookMetrics;
  /** This process's name on leases. */
  owner: string;
}

/** The actor of audit events the worker writes (410 Gone disables an endpoint). */
const WORKER_ACTOR = { keyId: null, keyName: "webhook delivery", clientAddress: "-" };

/**
 * Records what attempts came to (webhook_record.sql), counted in the metrics: delivered, due again
 * after their backoff, or failed for good. Kept until the worker's next round records them all in
 * one statement; a 410 at once.
 */
export class OutcomeRecorder {
  private finished: FinishedAttempt[] = [];

  constructor(private readonly deps: OutcomeRecorderDeps) {}

  add(attempt: FinishedAttempt): void {
    this.finished.push(attempt);
  }

  /**
   * Records the attempts added since the last flush. On failure they are kept for the next (their
   * leases run out meanwhile at worst, and they are tried again: at least once, never lost).
   */
  async flush(): Promise<number> {
    const finished = this.finished;
    if (finished.length === 0) return 0;
    this.finished = [];
    try {
      const { outbox, owner } = this.deps;
      this.count(finished, await outbox.record(owner, finished));
    } catch (err) {
      this.finished = finished.concat(this.finished);
      throw err;
    }
    return finished.length;
  }

  /** 410 Gone: the delivery fails and the endpoint is disabled, with its audit event, together. */
  async gone(attempt: FinishedAttempt & { delivery: Pick<ClaimedDelivery, "eventId"> }): Promise<void> {
    const { outbox, endpoints, owner, audit, logger } = this.deps;
    const { endpointId, eventId } = attempt.delivery;
    const recorded = await outbox.transaction(async (tx: SqlExecutor) => {
      const done = await outbox.record(owner, [attempt], tx);
      if (await endpoints.disableGone(tx, endpointId)) {
        await audit.record(tx, WORKER_ACTOR, {
          action: "webhook.disabled",
          targetType: "webhook",
          targetId: endpointId,
          details: { reason: "the receiver answered 410 Gone", eventId },
        });
      }
      return done;
    });
    logger.warn({ webhookId: endpointId }, "webhook endpoint answered 410 Gone: disabled");
    this.count([attempt], recorded);
  }

  private count(finished: FinishedAttempt[], recorded: RecordedDelivery[]): void {
    const { metrics } = this.deps;
    if (!metrics) return;
    const types = new Map(finished.map((f) => [`${f.delivery.endpointId}:${f.delivery.eventSeq}`, f.delivery.type]));
    for (const { endpointId, eventSeq, status } of recorded) {
      const type = types.get(`${endpointId}:${eventSeq}`);
      if (type) metrics.delivery(type, outcomeOf(status));
    }
  }
}

const outcomeOf = (status: DeliveryStatus) => (status === "pending" ? "retrying" : status);
