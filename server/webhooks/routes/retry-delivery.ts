import { ApiError } from "../../http/errors";
import { deliveryView, webhookRoute } from "./deps";
import { DeliveryParams, DeliveryView } from "./schemas";

/**
 * POST /webhooks/{id}/deliveries/{eventId}/retry: the delivery is due now, failed or delivered
 * alike, with a new 24 h of retries; under the same webhook-id, so receivers still dedupe it.
 */
export const retryDelivery = webhookRoute({
  method: "post",
  path: "/webhooks/{id}/deliveries/{eventId}/retry",
  operationId: "retryWebhookDelivery",
  summary: "Try a delivery again now (one in flight is left to finish)",
  params: DeliveryParams,
  answer: [202, "Due now", DeliveryView],
  async handle({ deps, endpoint, params: { eventId } }) {
    await deps.outbox.retry(endpoint.id, eventId, deps.retryWindowMs);
    const [delivery] = await deps.outbox.list(endpoint.id, { eventId, limit: 1 });
    if (!delivery) throw new ApiError("NOT_FOUND", "This endpoint has no delivery of that event");
    deps.wake();
    return deliveryView(delivery);
  },
});
