import { webhookRoute, webhookView } from "./deps";
import { WebhookView } from "./schemas";

/** GET /webhooks/{id}. */
export const getEndpoint = webhookRoute({
  method: "get",
  path: "/webhooks/{id}",
  operationId: "getWebhook",
  summary: "A webhook endpoint, without its secret",
  answer: [200, "The endpoint", WebhookView],
  handle: async ({ endpoint }) => webhookView(endpoint),
});
