import { audited, webhookRoute } from "./deps";

/** DELETE /webhooks/{id}: the endpoint and its delivery log; nothing more is sent to it. */
export const deleteEndpoint = webhookRoute({
  method: "delete",
  path: "/webhooks/{id}",
  operationId: "deleteWebhook",
  summary: "Delete a webhook endpoint and its delivery log",
  answer: [204, "Deleted"],
  async handle({ ctx, deps, endpoint }) {
    const deleted = (found: boolean) => (found ? endpoint : null);
    await audited(ctx, deps, "webhook.deleted", async (tx) => deleted(await deps.endpoints.delete(tx, endpoint.id)));
  },
});
