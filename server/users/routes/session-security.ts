import type { OpenAPIRegistry } from "../../http/openapi";

/** The two ways to send the session token login answers; PUT and DELETE /{username} take either. */
export const SESSION_SECURITY: Record<string, string[]>[] = [{ userSession: [] }, { api_key: [] }];

export function registerSessionSecuritySchemes(registry: OpenAPIRegistry): void {
  registry.registerComponent("securitySchemes", "userSession", {
    type: "http",
    scheme: "bearer",
    description: "The token of `GET /v2/user/login` (the part after `logged in user session:`)",
  });
  // Petstore v2's own scheme, name and header: a Petstore client already knows where to put it.
  registry.registerComponent("securitySchemes", "api_key", {
    type: "apiKey",
    in: "header",
    name: "api_key",
    description: "The same session token, in Petstore's `api_key` header",
  });
}
