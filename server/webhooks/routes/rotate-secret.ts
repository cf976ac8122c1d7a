import type Router from "@koa/router";
import { auditActor } from "../../access";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import { newEndpointSecret } from "../signing";
import { denied, MANAGE, managedEndpoint, security, webhookView, type WebhookRouteDeps } from "./deps";
import { WebhookParams, WebhookWithSecret } from "./schemas";

/**
 * POST /webhooks/{id}/rotate-secret: a new secret, shown this once. For 24 h every delivery
 * carries two signatures (new and old), so receivers can switch at their own pace.
 */
export function mountRotateSecret(router: Router, deps: WebhookRouteDeps): void {
  router.post("/webhooks/:id/rotate-secret", deps.access.require(MANAGE), async (ctx) => {
    const { id } = parseInput(WebhookParams, ctx.params);
    await managedEndpoint(ctx, deps, id);
    const secret = newEndpointSecret();
    const endpoint = await deps.db.transaction(async (tx) => {
      const rotated = await deps.endpoints.rotateSecret(tx, id, secret);
      if (!rotated) throw new ApiError("NOT_FOUND", "No webhook endpoint has this id");
      await deps.audit.record(tx, auditActor(ctx), {
        action: "webhook.secret-rotated",
        targetType: "webhook",
        targetId: id,
        details: { previousSecretExpiresAt: rotated.previousSecretUntil?.toISOString() ?? null },
      });
      return rotated;
    });
    ctx.body = { ...webhookView(endpoint), secret };
  });
}

export function registerRotateSecretOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/webhooks/{id}/rotate-secret",
    operationId: "rotateWebhookSecret",
    tags: ["webhooks"],
    summary: "A new signing secret, shown this once; the old one keeps signing beside it for 24 h",
    security,
    request: { params: WebhookParams },
    responses: {
      200: { description: "The new secret", content: { "application/json": { schema: WebhookWithSecret } } },
      404: errorResponse("NOT_FOUND"),
      ...denied,
    },
  });
}
