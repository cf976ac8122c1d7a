import type { AccessPrincipal } from "../../access";
import { maskUrl } from "../../config/credentials";
import { newEndpointSecret } from "../signing";
import { checkFilters, normalized, webhookView } from "./fields";
import { audited, webhookRoute } from "./route";
import { CreateWebhookRequest, WebhookWithSecret } from "./schemas";

/** POST /webhooks: a new endpoint; its secret is in this answer and never again. */
export const createEndpoint = webhookRoute({
  method: "post",
  path: "/webhooks",
  operationId: "createWebhook",
  summary: "Subscribe an endpoint to events (scope webhooks:manage); its signing secret is shown this once",
  description:
    "The endpoint receives only the events its creating key could read. Each event is one signed POST (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature).",
  body: CreateWebhookRequest,
  answer: [201, "Created", WebhookWithSecret],
  async handle({ ctx, deps, body: input }) {
    const filters = { collections: normalized(input.collections) ?? null, wallets: normalized(input.wallets) ?? null };
    checkFilters(ctx, filters);
    await deps.guard.checkUrl(input.url);
    const secret = newEndpointSecret();
    const fields = {
      url: input.url,
      events: [...new Set(input.events)],
      ...filters,
      enabled: input.enabled ?? true,
      accessKeyId: (ctx.state.access as AccessPrincipal).keyId,
    };
    const endpoint = await audited(
      ctx,
      deps,
      "webhook.created",
      (tx) => deps.endpoints.insert(tx, fields, secret),
      (created) => ({ url: maskUrl(created.url), events: created.events, ...filters, enabled: created.enabled }),
    );
    return { ...webhookView(endpoint), secret };
  },
});
