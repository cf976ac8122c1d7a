import { maskUrl } from "../../config/credentials";
import { audited, storedFields, webhookRoute, webhookView } from "./deps";
import { UpdateWebhookRequest, WebhookView } from "./schemas";

/** PATCH /webhooks/{id}: URL, events, filters; `enabled` disables and enables it. */
export const updateEndpoint = webhookRoute({
  method: "patch",
  path: "/webhooks/{id}",
  operationId: "updateWebhook",
  summary: "Change a webhook endpoint; enabled:false disables it, enabled:true enables it again",
  body: UpdateWebhookRequest,
  answer: [200, "The endpoint", WebhookView],
  async handle({ ctx, deps, endpoint, body: input }) {
    const { id } = endpoint;
    const changes = await storedFields(ctx, deps, input, endpoint);
    const onlyEnabled = Object.keys(changes).length === 1 && changes.enabled !== undefined;
    const action = onlyEnabled ? (changes.enabled ? "webhook.enabled" : "webhook.disabled") : "webhook.updated";
    const details = { ...changes, ...(changes.url !== undefined ? { url: maskUrl(changes.url) } : {}) };
    const updated = await audited(
      ctx,
      deps,
      action,
      (tx) => deps.endpoints.update(tx, id, changes),
      () => details,
    );
    return webhookView(updated);
  },
});
