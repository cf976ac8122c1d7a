/**
 * Every route of the OpenAPI document that acts on one chain takes `chain` (API.md "Chains"): in
 * its JSON body's schema or as a `chain` query parameter. The routes that do not are listed below,
 * each with why, so the next route cannot forget it.
 */
import { expect } from "chai";
import { openApiDocuments } from "../../server/openapi/documents";
import { operationsOf } from "../support/openapi-checks";

type Json = Record<string, unknown>;

const SERVICE_WIDE = "the service as a whole (every chain, or none)";
const EVERY_CHAIN_KEY = "a wallet is one key for every chain";
const ID_NAMES_CHAIN = "the id names its chain (the store answers it for any)";
const WEBHOOKS = "an endpoint serves every chain (its own `chains` filter lists several)";

/** Routes that act on no one chain, by "METHOD path", with why. */
const WITHOUT_CHAIN: Record<string, string> = {
  "GET /health": SERVICE_WIDE,
  "GET /health/ready": SERVICE_WIDE,
  "GET /health/live": SERVICE_WIDE,
  "GET /metrics": SERVICE_WIDE,
  "GET /chains": "lists every chain",
  "GET /openapi.json": SERVICE_WIDE,
  "GET /": SERVICE_WIDE,
  "POST /access-keys": "a key's `chains` limit lists several chains",
  "GET /access-keys": "keys are not of a chain",
  "DELETE /access-keys/{id}": "keys are not of a chain",
  "GET /audit-events": "the audit log is not of a chain",
  "POST /webhooks": WEBHOOKS,
  "GET /webhooks": WEBHOOKS,
  "GET /webhooks/{id}": WEBHOOKS,
  "PATCH /webhooks/{id}": WEBHOOKS,
  "DELETE /webhooks/{id}": WEBHOOKS,
  "POST /webhooks/{id}/rotate-secret": WEBHOOKS,
  "POST /webhooks/{id}/test": WEBHOOKS,
  "GET /webhooks/{id}/deliveries": WEBHOOKS,
  "POST /webhooks/{id}/deliveries/{eventId}/retry": WEBHOOKS,
  "POST /wallets": EVERY_CHAIN_KEY,
  "DELETE /wallets/{address}": EVERY_CHAIN_KEY,
  "GET /nft/operations/{operationId}": ID_NAMES_CHAIN,
  "GET /jobs/{id}": ID_NAMES_CHAIN,
  "GET /jobs/{id}/rows": ID_NAMES_CHAIN,
  "GET /jobs/{id}/events": ID_NAMES_CHAIN,
  "POST /jobs/{id}/resume": ID_NAMES_CHAIN,
  "POST /jobs/{id}/cancel": ID_NAMES_CHAIN,
  "GET /metadata/{chainId}/{address}/{tokenId}": "the chain is in the path",
  "GET /approvals": "lists the approvals of every chain the key may use",
  "POST /approvals/{id}/approve": ID_NAMES_CHAIN,
  "POST /approvals/{id}/reject": ID_NAMES_CHAIN,
  "GET /v2/user/login": "demo users: no chain",
  "GET /v2/user/logout": "demo users: no chain",
  "POST /v2/user/createWithList": "demo users: no chain",
  "POST /v2/user/createWithArray": "demo users: no chain",
  "POST /v2/user": "demo users: no chain",
  "GET /v2/user/{username}": "demo users: no chain",
  "PUT /v2/user/{username}": "demo users: no chain",
  "DELETE /v2/user/{username}": "demo users: no chain",
};

describe("the OpenAPI document: every route that acts on one chain takes chain", function () {
  const doc = openApiDocuments().api() as Json;
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  const resolve = (schema: unknown): Json | undefined => {
    const s = schema as Json | undefined;
    return typeof s?.$ref === "string" ? schemas[s.$ref.split("/").pop()!] : s;
  };
  const bodyTakesChain = (schema: unknown): boolean => {
    const s = resolve(schema);
    if (!s) return false;
    if (typeof s.properties === "object" && s.properties !== null && "chain" in s.properties) return true;
    return ["allOf", "anyOf", "oneOf"].some((k) => Array.isArray(s[k]) && (s[k] as unknown[]).some(bodyTakesChain));
  };
  const takesChain = (operation: Json): boolean => {
    const parameters = (operation.parameters ?? []) as Json[];
    if (parameters.some((p) => p.in === "query" && p.name === "chain")) return true;
    const content = ((operation.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
    return Object.values(content).some((media) => bodyTakesChain(media.schema));
  };
  const routes = operationsOf(doc).map((op) => ({
    route: `${op.method.toUpperCase()} ${op.path}`,
    takes: takesChain(((doc.paths as Json)[op.path] as Json)[op.method] as Json),
  }));

  it("each route takes chain, or is listed as exempt with why (and an exempt one takes none)", function () {
    const missing = routes.filter((r) => !r.takes && !(r.route in WITHOUT_CHAIN)).map((r) => r.route);
    expect(missing, "routes acting on one chain without `chain`").to.deep.equal([]);
    const exemptTaking = routes.filter((r) => r.takes && r.route in WITHOUT_CHAIN).map((r) => r.route);
    expect(exemptTaking, "listed as exempt, yet they take chain").to.deep.equal([]);
    const documented = new Set(routes.map((r) => r.route));
    expect(
      Object.keys(WITHOUT_CHAIN).filter((r) => !documented.has(r)),
      "exempt routes no longer documented",
    ).to.deep.equal([]);
    if (process.env.PRINT_CHAIN_ROUTES)
      console.log(
        routes
          .filter((r) => r.takes)
          .map((r) => r.route)
          .join("\n"),
      );
  });
});
