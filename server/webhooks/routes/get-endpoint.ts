import type Router from "@koa/router";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import { denied, MANAGE, managedEndpoint, security, webhookView, type WebhookRouteDeps } from "./deps";
import { WebhookParams, WebhookView } from "./schemas";

/** GET /webhooks/{id}. */
export function mountGetEndpoint(router: Router, deps: WebhookRouteDeps): void {
  router.get("/webhooks/:id", deps.access.require(MANAGE), async (ctx) => {
    const { id } = parseInput(WebhookParams, ctx.params);
    ctx.body = webhookView(await managedEndpoint(ctx, deps, id));
  });
}

export function registerGetEndpointOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/webhooks/{id}",
    operationId: "getWebhook",
    tags: ["webhooks"],
    summary: "A webhook endpoint, without its secret",
    security,
    request: { params: WebhookParams },
    responses: {
      200: { description: "The endpoint", content: { "application/json": { schema: WebhookView } } },
      404: errorResponse("NOT_FOUND"),
      ...denied,
    },
  });
}
