import type Router from "@koa/router";
import { auditActor } from "../../access";
import { maskUrl } from "../../config/credentials";
import { ApiError } from "../../http/errors";
import { readJsonBody } from "../../http/json-body";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseBody, parseInput } from "../../http/validation";
import {
  checkFilters,
  denied,
  MANAGE,
  managedEndpoint,
  normalized,
  security,
  webhookView,
  type WebhookRouteDeps,
} from "./deps";
import { UpdateWebhookRequest, WebhookParams, WebhookView } from "./schemas";

/** PATCH /webhooks/{id}: URL, events, filters; `enabled` disables and enables it. */
export function mountUpdateEndpoint(router: Router, deps: WebhookRouteDeps): void {
  router.patch("/webhooks/:id", deps.access.require(MANAGE), async (ctx) => {
    const { id } = parseInput(WebhookParams, ctx.params);
    await managedEndpoint(ctx, deps, id);
    const input = parseBody(UpdateWebhookRequest, await readJsonBody(ctx));
    const changes = {
      ...input,
      ...(input.events ? { events: [...new Set(input.events)] } : {}),
      ...(input.collections !== undefined ? { collections: normalized(input.collections) } : {}),
      ...(input.wallets !== undefined ? { wallets: normalized(input.wallets) } : {}),
    };
    checkFilters(ctx, changes);
    if (changes.url !== undefined) await deps.guard.checkUrl(changes.url);
    const endpoint = await deps.db.transaction(async (tx) => {
      const updated = await deps.endpoints.update(tx, id, changes);
      if (!updated) throw new ApiError("NOT_FOUND", "No webhook endpoint has this id");
      const details: Record<string, unknown> = { ...changes };
      if (changes.url !== undefined) details.url = maskUrl(changes.url);
      const action =
        Object.keys(changes).length === 1 && changes.enabled !== undefined
          ? changes.enabled
            ? "webhook.enabled"
            : "webhook.disabled"
          : "webhook.updated";
      await deps.audit.record(tx, auditActor(ctx), { action, targetType: "webhook", targetId: id, details });
      return updated;
    });
    ctx.body = webhookView(endpoint);
  });
}

export function registerUpdateEndpointOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "patch",
    path: "/webhooks/{id}",
    operationId: "updateWebhook",
    tags: ["webhooks"],
    summary: "Change a webhook endpoint; enabled:false disables it, enabled:true enables it again",
    security,
    request: {
      params: WebhookParams,
      body: { required: true, content: { "application/json": { schema: UpdateWebhookRequest } } },
    },
    responses: {
      200: { description: "The endpoint", content: { "application/json": { schema: WebhookView } } },
      400: errorResponse("VALIDATION_ERROR or WEBHOOK_URL_FORBIDDEN"),
      404: errorResponse("NOT_FOUND"),
      ...denied,
    },
  });
}
