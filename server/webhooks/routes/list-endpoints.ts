import type Router from "@koa/router";
import { z } from "zod";
import type { OpenAPIRegistry } from "../../http/openapi";
import { denied, MANAGE, ownerFilter, security, webhookView, type WebhookRouteDeps } from "./deps";
import { WebhookView } from "./schemas";

/** GET /webhooks: the endpoints the key manages (the root key: all), without secrets. */
export function mountListEndpoints(router: Router, deps: WebhookRouteDeps): void {
  router.get("/webhooks", deps.access.require(MANAGE), async (ctx) => {
    ctx.body = { webhooks: (await deps.endpoints.list(ownerFilter(ctx))).map(webhookView) };
  });
}

export function registerListEndpointsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/webhooks",
    operationId: "listWebhooks",
    tags: ["webhooks"],
    summary: "The webhook endpoints this key manages (the root key: all), without secrets",
    security,
    responses: {
      200: {
        description: "The endpoints",
        content: { "application/json": { schema: z.object({ webhooks: z.array(WebhookView) }) } },
      },
      ...denied,
    },
  });
}
