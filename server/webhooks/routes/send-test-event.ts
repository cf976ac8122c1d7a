import { newEventId, TEST_EVENT_TYPE } from "../events";
import { webhookRoute } from "./deps";
import { TestEventAccepted } from "./schemas";

/**
 * POST /webhooks/{id}/test: a `webhook.test` event to this endpoint alone, signed and retried like
 * any other (also while the endpoint is disabled, to check a receiver before enabling it again).
 */
export const sendTestEvent = webhookRoute({
  method: "post",
  path: "/webhooks/{id}/test",
  operationId: "sendWebhookTestEvent",
  summary: "Send a webhook.test event to this endpoint; the delivery log shows how it went",
  answer: [202, "Queued", TestEventAccepted],
  async handle({ deps, endpoint: { id } }) {
    const eventId = newEventId();
    const data = { webhookId: id, message: "A test event: this endpoint receives and verifies deliveries." };
    await deps.outbox.insertTestEvent(eventId, id, data);
    deps.wake();
    return { eventId, type: TEST_EVENT_TYPE };
  },
});
