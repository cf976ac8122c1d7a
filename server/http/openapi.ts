import { OpenAPIRegistry, OpenApiGeneratorV31, extendZodWithOpenApi } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";

// Adds `.openapi()` to zod schemas; done once here, before any route module builds a schema.
extendZodWithOpenApi(z);

export { OpenAPIRegistry };

export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: "VALIDATION_ERROR" }),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  .openapi("Error");

/** A JSON error response for the OpenAPI document. */
export function errorResponse(description: string) {
  return { description, content: { "application/json": { schema: ErrorEnvelope } } };
}

export interface DocumentInfo {
  title?: string;
  description?: string;
  /** The base URL clients call (`servers`); unset = relative to where the document is served. */
  serverUrl?: string;
}

export function buildOpenApiDocument(registry: OpenAPIRegistry, info: DocumentInfo = {}) {
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: info.title ?? "NFT contract operations service",
      version: "0.1.0",
      description:
        info.description ?? "Mint, whitelist, pause, price, query and withdraw on an ERC-721 collection over HTTP.",
    },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
  });
  nullableRefs(doc);
  for (const item of Object.values(doc.paths ?? {}))
    for (const method of ["get", "put", "post", "delete", "patch"] as const) {
      const operation = item[method];
      if (!operation) continue;
      chainRules(operation as Operation, doc.components?.schemas ?? {});
      bodyFromPath(operation as Operation, doc.components?.schemas ?? {});
      internalError(operation as Operation);
    }
  return doc;
}

type Json = Record<string, unknown>;
type Operation = Json & { parameters?: Json[]; requestBody?: Json; responses: Record<string, Json> };

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null;

/** An operation's mark (removed from the document) naming the body fields its path gives. */
export const BODY_FROM_PATH = "x-body-from-path";

/**
 * A body field the path gives (`contractAddress` on /collections/{address}/…) is optional in the
 * body's schema, and said to be the path's when given: a body naming another one is a 400.
 */
function bodyFromPath(operation: Operation, schemas: Record<string, unknown>): void {
  const fields = operation[BODY_FROM_PATH];
  delete operation[BODY_FROM_PATH];
  if (!Array.isArray(fields)) return;
  const ref = (operation.requestBody as { content?: Record<string, { schema?: Json }> } | undefined)?.content?.[
    "application/json"
  ]?.schema?.$ref;
  const body = typeof ref === "string" ? schemas[ref.replace("#/components/schemas/", "")] : undefined;
  if (!isObject(body)) return;
  if (Array.isArray(body.required)) body.required = body.required.filter((name) => !fields.includes(name));
  for (const field of fields) {
    const property = (body.properties as Record<string, Json> | undefined)?.[field];
    if (property) property.description = `Optional: the path gives it; when given, it must be the path's`;
  }
}

/**
 * Any route can answer 500 INTERNAL_ERROR: a bug, or a database that refuses a write the service
 * did not foresee. It is logged with the request id and carries no stack; the document lists it
 * on every operation, so that no answer is one the document does not give.
 */
function internalError(operation: Operation): void {
  operation.responses["500"] ??= {
    description: "INTERNAL_ERROR: a fault of the service, logged with the request id (`X-Request-Id`); try again later",
    content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
  };
}

/**
 * zod's `.nullable()` on a registered schema comes out as `allOf: [{$ref}, {type: [object, null]}]`,
 * which no null satisfies (the ref's own type says object): it is rewritten as
 * `anyOf: [{$ref}, {type: null}]`. An integer gets zod's safe-integer bounds. A parameter's type loses `null` (zod-to-openapi gives an optional
 * `z.coerce` one), since a query or a path cannot carry a JSON null.
 */
function nullableRefs(node: unknown, parameter = false): void {
  if (Array.isArray(node)) return node.forEach((n) => nullableRefs(n, parameter));
  if (!isObject(node)) return;
  const allOf = node.allOf;
  if (Array.isArray(allOf) && allOf.length === 2 && isObject(allOf[0]) && "$ref" in allOf[0] && isObject(allOf[1])) {
    const { type, ...rest } = allOf[1];
    if (Array.isArray(type) && type.includes("null") && Object.keys(rest).length === 0) {
      delete node.allOf;
      node.anyOf = [allOf[0], { type: "null" }];
    }
  }
  // zod 4's .int() refuses an integer past 2^53 - 1 (not a safe integer): the document says so.
  if (node.type === "integer" || (Array.isArray(node.type) && node.type.includes("integer"))) {
    node.maximum ??= Number.MAX_SAFE_INTEGER;
    node.minimum ??= Number.MIN_SAFE_INTEGER;
  }
  if (parameter && Array.isArray(node.type) && node.type.includes("null")) {
    const types = node.type.filter((t) => t !== "null");
    node.type = types.length === 1 ? types[0] : types;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === "parameters" && Array.isArray(value))
      for (const p of value) {
        if (!isObject(p) || !isObject(p.schema)) continue;
        nullableRefs(p.schema, true);
        // A path segment is never empty.
        if (p.in === "path" && p.schema.type === "string") p.schema.minLength ??= 1;
      }
    else nullableRefs(value, parameter);
  }
}

/**
 * What naming a chain can answer, on every route that takes one (`?chain=`, a body's `chain`, or a
 * key's or a webhook's `chains`/`collections` filter): 404 CHAIN_NOT_FOUND for a chain not
 * configured, and, where the chain is "required when several chains are configured", 400
 * CHAIN_REQUIRED. Listed here once, rather than by each of some forty registrations.
 */
function chainRules(operation: Operation, schemas: Json): void {
  const resolve = (schema: unknown): Json | undefined => {
    if (!isObject(schema)) return undefined;
    return typeof schema.$ref === "string" ? resolve(schemas[schema.$ref.split("/").pop()!]) : schema;
  };
  const fields: Json[] = [];
  for (const p of operation.parameters ?? []) if (p.in === "query" && p.name === "chain") fields.push(p);
  const content = resolve(operation.requestBody)?.content;
  const body = resolve(
    isObject(content) && isObject(content["application/json"]) && content["application/json"].schema,
  );
  const bodies = body ? [body, ...((body.anyOf ?? body.oneOf ?? body.allOf ?? []) as unknown[]).map(resolve)] : [];
  for (const b of bodies) {
    const properties = b?.properties;
    if (!isObject(properties)) continue;
    for (const name of ["chain", "chains", "collections"])
      if (isObject(properties[name])) fields.push(properties[name]);
  }
  if (fields.length === 0) return;
  const add = (status: string, code: string) => {
    const response = operation.responses[status];
    if (!response) {
      const schema = { $ref: "#/components/schemas/Error" };
      operation.responses[status] = { description: code, content: { "application/json": { schema } } };
      return;
    }
    const description = String(response.description ?? "");
    if (description.split(/[^A-Z_]/).includes(code)) return;
    response.description = description.includes(":") ? `${description}; ${code}` : `${description}, ${code}`;
  };
  add("404", "CHAIN_NOT_FOUND");
  if (fields.some((f) => /required when several chains/.test(String(f.description ?? ""))))
    add("400", "CHAIN_REQUIRED");
}
