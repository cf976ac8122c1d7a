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
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: info.title ?? "NFT contract operations service",
      version: "0.1.0",
      description:
        info.description ?? "Mint, whitelist, pause, price, query and withdraw on an ERC-721 collection over HTTP.",
    },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
  });
}
