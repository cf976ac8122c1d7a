import type Router from "@koa/router";
import { z } from "zod";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import type { AccessPrincipal } from "../principal";
import type { AccessRouteDeps } from "./access-key-routes";
import { AuditEventView, AuditQuery } from "./schemas";

/** GET /audit-events: newest first, paged by an opaque cursor. */
export function mountAuditRoutes(router: Router, { access, audit }: AccessRouteDeps): void {
  router.get("/audit-events", access.require({ scope: "access-keys:manage", key: "always" }), async (ctx) => {
    const { limit, cursor } = parseInput(AuditQuery, ctx.query);
    const events = await audit.list(limit, cursor, ctx.state.access as AccessPrincipal);
    ctx.body = {
      auditEvents: events.map((e) => ({ ...e, at: e.at.toISOString() })),
      ...(events.length === limit ? { cursor: events[events.length - 1].id } : {}),
    };
  });
}

export function registerAuditOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/audit-events",
    operationId: "listAuditEvents",
    tags: ["access"],
    summary:
      "Changes to keys, wallets, webhooks and policies, newest first (scope access-keys:manage); a key limited to some wallets or collections sees only the events about them",
    security: [{ AccessKey: [] }],
    request: { query: AuditQuery },
    responses: {
      200: {
        description: "A page of events; `cursor` fetches the next",
        content: {
          "application/json": {
            schema: z.object({ auditEvents: z.array(AuditEventView), cursor: z.string().optional() }),
          },
        },
      },
      400: errorResponse("VALIDATION_ERROR"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      429: errorResponse("RATE_LIMITED"),
    },
  });
}
