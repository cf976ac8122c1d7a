import type Router from "@koa/router";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import { newEventId } from "../events";
import { denied, MANAGE, managedEndpoint, security, type WebhookRouteDeps } from "./deps";
import { TestEventAccepted, WebhookParams } from "./schemas";

/**
 * POST /webhooks/{id}/test: a `webhook.test` event to this endpoint alone, signed and retried like
 * any other (also while the endpoint is disabled, to check a receiver before enabling it again).
 */
export function mountSendTestEvent(router: Router, deps: WebhookRouteDeps): void {
  router.post("/webhooks/:id/test", deps.access.require(MANAGE), async (ctx) => {
    const { id } = parseInput(WebhookParams, ctx.params);
    const endpoint = await managedEndpoint(ctx, deps, id);
    const eventId = newEventId();
    await deps.db.transaction((tx) =>
      deps.outbox.insertTestEvent(tx, eventId, endpoint.id, {
        webhookId: endpoint.id,
        message: "A test event: this endpoint receives and verifies deliveries.",
      }),
    );
    deps.wake();
    ctx.status = 202;
    ctx.body = { eventId, type: "webhook.test" };
  });
}

export function registerSendTestEventOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/webhooks/{id}/test",
    operationId: "sendWebhookTestEvent",
    tags: ["webhooks"],
    summary: "Send a webhook.test event to this endpoint; the delivery log shows how it went",
    security,
    request: { params: WebhookParams },
    responses: {
      202: { description: "Queued", content: { "application/json": { schema: TestEventAccepted } } },
      404: errorResponse("NOT_FOUND"),
      ...denied,
    },
  });
}
