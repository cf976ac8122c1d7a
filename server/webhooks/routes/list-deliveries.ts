import type Router from "@koa/router";
import { z } from "zod";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import type { DeliveryRecord } from "../outbox";
import { denied, MANAGE, managedEndpoint, security, type WebhookRouteDeps } from "./deps";
import { DeliveriesQuery, DeliveryView, WebhookParams } from "./schemas";

/** GET /webhooks/{id}/deliveries: each event sent to the endpoint, newest first, with its attempts. */
export function mountListDeliveries(router: Router, deps: WebhookRouteDeps): void {
  router.get("/webhooks/:id/deliveries", deps.access.require(MANAGE), async (ctx) => {
    const { id } = parseInput(WebhookParams, ctx.params);
    await managedEndpoint(ctx, deps, id);
    const { status, limit, cursor } = parseInput(DeliveriesQuery, ctx.query);
    const deliveries = await deps.outbox.list(id, { status, before: cursor, limit });
    ctx.body = {
      deliveries: deliveries.map(deliveryView),
      ...(deliveries.length === limit ? { cursor: deliveries[deliveries.length - 1].cursor } : {}),
    };
  });
}

export function deliveryView(d: DeliveryRecord): z.infer<typeof DeliveryView> {
  return {
    eventId: d.eventId,
    type: d.type,
    status: d.status,
    inFlight: d.inFlight,
    attempts: d.attempts,
    attemptLog: d.attemptLog,
    lastStatus: d.lastStatus,
    lastError: d.lastError,
    lastAttemptAt: d.lastAttemptAt?.toISOString() ?? null,
    nextAttemptAt: d.nextAttemptAt?.toISOString() ?? null,
    deliveredAt: d.deliveredAt?.toISOString() ?? null,
    createdAt: d.createdAt.toISOString(),
  };
}

export function registerListDeliveriesOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/webhooks/{id}/deliveries",
    operationId: "listWebhookDeliveries",
    tags: ["webhooks"],
    summary: "The delivery log: each event with its attempts, last HTTP status and next try, newest first",
    security,
    request: { params: WebhookParams, query: DeliveriesQuery },
    responses: {
      200: {
        description: "A page of deliveries; `cursor` fetches the next",
        content: {
          "application/json": {
            schema: z.object({ deliveries: z.array(DeliveryView), cursor: z.string().optional() }),
          },
        },
      },
      400: errorResponse("VALIDATION_ERROR"),
      404: errorResponse("NOT_FOUND"),
      ...denied,
    },
  });
}
