/**
 * The OpenAPI registrations of every route, assembled in one place below the service and the MCP
 * tools: /openapi.json is built from them, and each MCP tool reads its route's schemas here.
 */
import { registerAccessOpenApi } from "../access";
import { registerApprovalOpenApi } from "../approvals";
import { registerChainsOpenApi } from "../chains/status";
import { registerCollectionsOpenApi } from "../collections";
import { registerDropsOpenApi } from "../drops/routes";
import { OpenAPIRegistry, buildOpenApiDocument } from "../http/openapi";
import { registerDocsOpenApi, registerServiceOpenApi } from "../http/service-routes";
import { registerJobOpenApi } from "../jobs";
import { registerMetadataOpenApi } from "../metadata";
import { registerNftOpenApi } from "../nft";
import { registerUserOpenApi } from "../users";
import { registerWalletOpenApi } from "../wallets";
import { registerWebhookOpenApi } from "../webhooks";

export interface OpenApiDocuments {
  /** What the API listener serves: /nft, the service routes, and /v2/user unless `demo` is set. */
  api: () => object;
  /** What the demo listener serves (DEMO_PORT): /v2/user alone. */
  demo?: () => object;
}

/**
 * The OpenAPI document of each listener, each listing only the routes that listener serves;
 * each is built on first use, then kept.
 */
export function openApiDocuments(separateDemo = false): OpenApiDocuments {
  const api = new OpenAPIRegistry();
  registerApiOpenApi(api);
  if (!separateDemo) {
    registerUserOpenApi(api);
    return { api: once(() => buildOpenApiDocument(api)) };
  }
  const demo = new OpenAPIRegistry();
  registerDocsOpenApi(demo);
  registerUserOpenApi(demo);
  return {
    api: once(() => buildOpenApiDocument(api)),
    demo: once(() =>
      buildOpenApiDocument(demo, {
        title: "NFT contract operations service: demo users",
        description: "The Swagger Petstore user group (/v2/user), served on its own listener (DEMO_PORT).",
      }),
    ),
  };
}

/** Every route of the API listener but the demo users: the OpenAPI document, and the MCP tools' schemas. */
export function registerApiOpenApi(api: OpenAPIRegistry): void {
  registerServiceOpenApi(api);
  registerChainsOpenApi(api);
  registerDocsOpenApi(api);
  registerAccessOpenApi(api);
  registerApprovalOpenApi(api);
  registerWebhookOpenApi(api);
  registerWalletOpenApi(api);
  registerNftOpenApi(api);
  registerCollectionsOpenApi(api);
  registerDropsOpenApi(api);
  registerJobOpenApi(api);
  registerMetadataOpenApi(api);
}

function once<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => (built ??= { value: build() }).value;
}
