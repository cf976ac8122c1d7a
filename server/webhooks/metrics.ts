import { Counter, Gauge, type Registry } from "prom-client";
import { EVENT_TYPES, TEST_EVENT_TYPE } from "./events";

export type DeliveryOutcome = "delivered" | "retrying" | "failed";

const OUTCOMES: DeliveryOutcome[] = ["delivered", "retrying", "failed"];

/** The webhooks' figures on GET /metrics, in the service's registry. */
export class WebhookMetrics {
  private readonly deliveries: Counter<"type" | "outcome">;

  constructor(registry: Registry, oldestUndeliveredSeconds: () => Promise<number>) {
    this.deliveries = new Counter({
      name: "webhook_deliveries_total",
      help: "Webhook delivery attempts by event type and outcome: delivered (2xx), retrying (to be tried again), failed (given up: retries ran out, 410 Gone, or the endpoint's key no longer reads the event)",
      labelNames: ["type", "outcome"],
      registers: [registry],
    });
    for (const type of [...EVENT_TYPES, TEST_EVENT_TYPE])
      for (const outcome of OUTCOMES) this.deliveries.inc({ type, outcome }, 0);
    new Gauge({
      name: "webhook_oldest_undelivered_event_age_seconds",
      help: "Age of the oldest webhook event not yet delivered to every endpoint that takes it (0 when none waits)",
      registers: [registry],
      async collect() {
        // A store that does not answer keeps the last value: /metrics must still answer.
        await oldestUndeliveredSeconds().then(
          (age) => this.set(age),
          () => undefined,
        );
      },
    });
  }

  delivery(type: string, outcome: DeliveryOutcome): void {
    this.deliveries.inc({ type, outcome });
  }
}
