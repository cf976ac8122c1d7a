import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { OpenAPIRegistry } from "../http/openapi";
import { registerApiOpenApi } from "../openapi/documents";

/** A route as its OpenAPI registration declares it: the zod schemas its handler parses. */
export interface RouteSchemas {
  method: string;
  /** The OpenAPI path (`{address}` parameters). */
  path: string;
  params: z.ZodRawShape;
  query: z.ZodRawShape;
  body: z.ZodRawShape;
  /** The 200 (else 201/202) answer's schema. */
  response?: z.ZodType;
}

let routes: Map<string, RouteSchemas> | undefined;

/**
 * The schemas of the route registered under `operationId`, read from the same registration that
 * builds /openapi.json: a tool's input is made from them, never from a second copy, so a field a
 * route gains (a `chain`, say) reaches its tool with nothing else to change.
 */
export function routeSchemas(operationId: string): RouteSchemas {
  routes ??= readRoutes();
  const route = routes.get(operationId);
  if (!route) throw new Error(`MCP: no route registered as ${operationId}`);
  return route;
}

function readRoutes(): Map<string, RouteSchemas> {
  const registry = new OpenAPIRegistry();
  registerApiOpenApi(registry);
  const found = new Map<string, RouteSchemas>();
  for (const definition of registry.definitions) {
    if (definition.type !== "route" || !definition.route.operationId) continue;
    const route: RouteConfig = definition.route;
    const body = jsonSchemaOf(route.request?.body?.content);
    const success = [200, 201, 202].map((status) => route.responses[status]).find((r) => r && "content" in r);
    const response = success && "content" in success ? jsonSchemaOf(success.content) : undefined;
    found.set(route.operationId!, {
      method: route.method,
      path: route.path,
      params: shapeOf(route.request?.params),
      // A write tool plans by its own ?dryRun=true (server.ts): not a field an agent sets.
      query: withoutDryRun(shapeOf(route.request?.query)),
      body: shapeOf(body),
      response: response instanceof z.ZodType ? response : undefined,
    });
  }
  return found;
}

/** The zod schema of a content map's application/json entry, if it has one. */
const jsonSchemaOf = (content: unknown): unknown => {
  const media = (content as Record<string, unknown> | undefined)?.["application/json"];
  return media && typeof media === "object" && "schema" in media ? media.schema : undefined;
};

const shapeOf = (schema: unknown): z.ZodRawShape => (schema instanceof z.ZodObject ? schema.shape : {});

const withoutDryRun = ({ dryRun: _dryRun, ...shape }: z.ZodRawShape): z.ZodRawShape => shape;
