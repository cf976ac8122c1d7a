import { z } from "zod";
import { pageOf, PageQuery, pageRequest } from "../../http/paging";
import { ownerFilter, webhookRoute, webhookView } from "./deps";
import { WebhookView } from "./schemas";

/** GET /webhooks: the endpoints the key manages (the root key: all), without secrets. */
export const listEndpoints = webhookRoute({
  method: "get",
  path: "/webhooks",
  operationId: "listWebhooks",
  summary: "The webhook endpoints this key manages (the root key: all), without secrets, oldest first",
  query: PageQuery,
  answer: [
    200,
    "A page of endpoints; `cursor` fetches the next",
    z.object({ webhooks: z.array(WebhookView), cursor: z.string().optional() }),
  ],
  async handle({ ctx, deps, query }) {
    const page = pageRequest(query);
    const { items, cursor } = pageOf(await deps.endpoints.list(ownerFilter(ctx), page), page.limit, (e) => e.position);
    return { webhooks: items.map(webhookView), ...(cursor ? { cursor } : {}) };
  },
});
