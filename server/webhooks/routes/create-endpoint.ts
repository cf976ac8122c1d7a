import type Router from "@koa/router";
import { auditActor, type AccessPrincipal } from "../../access";
import { maskUrl } from "../../config/credentials";
import { readJsonBody } from "../../http/json-body";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseBody } from "../../http/validation";
import { newEndpointSecret } from "../signing";
import { checkFilters, denied, MANAGE, normalized, security, webhookView, type WebhookRouteDeps } from "./deps";
import { CreateWebhookRequest, WebhookWithSecret } from "./schemas";

/** POST /webhooks: a new endpoint; its secret is in this answer and never again. */
export function mountCreateEndpoint(router: Router, deps: WebhookRouteDeps): void {
  router.post("/webhooks", deps.access.require(MANAGE), async (ctx) => {
    const input = parseBody(CreateWebhookRequest, await readJsonBody(ctx));
    const filters = { collections: normalized(input.collections) ?? null, wallets: normalized(input.wallets) ?? null };
    checkFilters(ctx, filters);
    await deps.guard.checkUrl(input.url);
    const secret = newEndpointSecret();
    const endpoint = await deps.db.transaction(async (tx) => {
      const created = await deps.endpoints.insert(
        tx,
        {
          url: input.url,
          events: [...new Set(input.events)],
          ...filters,
          enabled: input.enabled ?? true,
          accessKeyId: (ctx.state.access as AccessPrincipal).keyId,
        },
        secret,
      );
      await deps.audit.record(tx, auditActor(ctx), {
        action: "webhook.created",
        targetType: "webhook",
        targetId: created.id,
        details: { url: maskUrl(created.url), events: created.events, ...filters, enabled: created.enabled },
      });
      return created;
    });
    ctx.status = 201;
    ctx.body = { ...webhookView(endpoint), secret };
  });
}

export function registerCreateEndpointOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/webhooks",
    operationId: "createWebhook",
    tags: ["webhooks"],
    summary: "Subscribe an endpoint to events (scope webhooks:manage); its signing secret is shown this once",
    description:
      "The endpoint receives only the events its creating key could read. Each event is one signed POST (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature).",
    security,
    request: { body: { required: true, content: { "application/json": { schema: CreateWebhookRequest } } } },
    responses: {
      201: { description: "Created", content: { "application/json": { schema: WebhookWithSecret } } },
      400: errorResponse("VALIDATION_ERROR or WEBHOOK_URL_FORBIDDEN"),
      ...denied,
    },
  });
}
