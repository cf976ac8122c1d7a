import { z } from "zod";
import { deliveryView, webhookRoute } from "./deps";
import { DeliveriesQuery, DeliveryView } from "./schemas";

/** GET /webhooks/{id}/deliveries: each event sent to the endpoint, newest first, with its attempts. */
export const listDeliveries = webhookRoute({
  method: "get",
  path: "/webhooks/{id}/deliveries",
  operationId: "listWebhookDeliveries",
  summary: "The delivery log: each event with its attempts, last HTTP status and next try, newest first",
  query: DeliveriesQuery,
  answer: [
    200,
    "A page of deliveries; `cursor` fetches the next",
    z.object({ deliveries: z.array(DeliveryView), cursor: z.string().optional() }),
  ],
  async handle({ deps, endpoint, query: { status, limit, cursor } }) {
    const deliveries = await deps.outbox.list(endpoint.id, { status, before: cursor, limit });
    return {
      deliveries: deliveries.map(deliveryView),
      ...(deliveries.length === limit ? { cursor: deliveries[deliveries.length - 1].cursor } : {}),
    };
  },
});
