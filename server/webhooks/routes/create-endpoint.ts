import type { AccessPrincipal } from "../../access";
import { maskUrl } from "../../config/credentials";
import { newEndpointSecret } from "../signing";
import { audited, storedFields, webhookRoute, webhookView } from "./deps";
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
  async handle({ ctx, deps, body }) {
    const {
      url,
      events,
      collections = null,
      wallets = null,
      chains = null,
      enabled = true,
    } = await storedFields(ctx, deps, body);
    const accessKeyId = (ctx.state.access as AccessPrincipal).keyId;
    const secret = newEndpointSecret();
    const endpoint = await audited(
      ctx,
      deps,
      "webhook.created",
      (tx) => deps.endpoints.insert(tx, { url, events, collections, wallets, chains, enabled, accessKeyId }, secret),
      () => ({ url: maskUrl(url), events, collections, wallets, ...(chains ? { chains } : {}), enabled }),
    );
    return { ...webhookView(endpoint), secret };
  },
});
