import type Router from "@koa/router";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import { denied, MANAGE, managedEndpoint, security, type WebhookRouteDeps } from "./deps";
import { deliveryView } from "./list-deliveries";
import { DeliveryParams, DeliveryView } from "./schemas";

/**
 * POST /webhooks/{id}/deliveries/{eventId}/retry: the delivery is due now, failed or delivered
 * alike, with a new 24 h of retries; under the same webhook-id, so receivers still dedupe it.
 */
export function mountRetryDelivery(router: Router, deps: WebhookRouteDeps): void {
  router.post("/webhooks/:id/deliveries/:eventId/retry", deps.access.require(MANAGE), async (ctx) => {
    const { id, eventId } = parseInput(DeliveryParams, ctx.params);
    await managedEndpoint(ctx, deps, id);
    await deps.outbox.retry(id, eventId, deps.retryWindowMs);
    const delivery = await deps.outbox.findDelivery(id, eventId);
    if (!delivery) throw new ApiError("NOT_FOUND", "This endpoint has no delivery of that event");
    deps.wake();
    ctx.status = 202;
    ctx.body = deliveryView(delivery);
  });
}

export function registerRetryDeliveryOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/webhooks/{id}/deliveries/{eventId}/retry",
    operationId: "retryWebhookDelivery",
    tags: ["webhooks"],
    summary: "Try a delivery again now (one in flight is left to finish)",
    security,
    request: { params: DeliveryParams },
    responses: {
      202: { description: "Due now", content: { "application/json": { schema: DeliveryView } } },
      404: errorResponse("NOT_FOUND"),
      ...denied,
    },
  });
}
