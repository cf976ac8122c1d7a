import type Router from "@koa/router";
import { auditActor } from "../../access";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import { denied, MANAGE, managedEndpoint, security, type WebhookRouteDeps } from "./deps";
import { WebhookParams } from "./schemas";

/** DELETE /webhooks/{id}: the endpoint and its delivery log; nothing more is sent to it. */
export function mountDeleteEndpoint(router: Router, deps: WebhookRouteDeps): void {
  router.delete("/webhooks/:id", deps.access.require(MANAGE), async (ctx) => {
    const { id } = parseInput(WebhookParams, ctx.params);
    await managedEndpoint(ctx, deps, id);
    await deps.db.transaction(async (tx) => {
      if (!(await deps.endpoints.delete(tx, id))) throw new ApiError("NOT_FOUND", "No webhook endpoint has this id");
      await deps.audit.record(tx, auditActor(ctx), { action: "webhook.deleted", targetType: "webhook", targetId: id });
    });
    ctx.status = 204;
  });
}

export function registerDeleteEndpointOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "delete",
    path: "/webhooks/{id}",
    operationId: "deleteWebhook",
    tags: ["webhooks"],
    summary: "Delete a webhook endpoint and its delivery log",
    security,
    request: { params: WebhookParams },
    responses: { 204: { description: "Deleted" }, 404: errorResponse("NOT_FOUND"), ...denied },
  });
}
