import type Router from "@koa/router";
import { z } from "zod";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { pageOf, PageQuery, pageRequest } from "../../http/paging";
import { parseInput } from "../../http/validation";
import { denied, MANAGE, ownerFilter, security, webhookView, type WebhookRouteDeps } from "./deps";
import { WebhookView } from "./schemas";

/** GET /webhooks: the endpoints the key manages (the root key: all), without secrets. */
export function mountListEndpoints(router: Router, deps: WebhookRouteDeps): void {
  router.get("/webhooks", deps.access.require(MANAGE), async (ctx) => {
    const page = pageRequest(parseInput(PageQuery, ctx.query));
    const { items, cursor } = pageOf(await deps.endpoints.list(ownerFilter(ctx), page), page.limit, (e) => e.position);
    ctx.body = { webhooks: items.map(webhookView), ...(cursor ? { cursor } : {}) };
  });
}

export function registerListEndpointsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/webhooks",
    operationId: "listWebhooks",
    tags: ["webhooks"],
    summary: "The webhook endpoints this key manages (the root key: all), without secrets, oldest first",
    security,
    request: { query: PageQuery },
    responses: {
      200: {
        description: "A page of endpoints; `cursor` fetches the next",
        content: {
          "application/json": { schema: z.object({ webhooks: z.array(WebhookView), cursor: z.string().optional() }) },
        },
      },
      400: errorResponse("VALIDATION_ERROR"),
      ...denied,
    },
  });
}
