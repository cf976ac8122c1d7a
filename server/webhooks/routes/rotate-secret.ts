import { newEndpointSecret } from "../signing";
import { audited, webhookRoute, webhookView } from "./deps";
import { WebhookWithSecret } from "./schemas";

/**
 * POST /webhooks/{id}/rotate-secret: a new secret, shown this once. For 24 h every delivery
 * carries two signatures (new and old), so receivers can switch at their own pace.
 */
export const rotateSecret = webhookRoute({
  method: "post",
  path: "/webhooks/{id}/rotate-secret",
  operationId: "rotateWebhookSecret",
  summary: "A new signing secret, shown this once; the old one keeps signing beside it for 24 h",
  answer: [200, "The new secret", WebhookWithSecret],
  async handle({ ctx, deps, endpoint: { id } }) {
    const secret = newEndpointSecret();
    const rotated = await audited(
      ctx,
      deps,
      "webhook.secret-rotated",
      (tx) => deps.endpoints.rotateSecret(tx, id, secret),
      (r) => ({ previousSecretExpiresAt: r.previousSecretUntil?.toISOString() ?? null }),
    );
    return { ...webhookView(rotated), secret };
  },
});
