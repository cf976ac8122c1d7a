/** Access keys: who may call what (API.md, "Access keys"), and the audit trail of changes. */
import Router from "@koa/router";
import type { SqlDriver } from "../db";
import type { Logger } from "../http/logger";
import type { OpenAPIRegistry } from "../http/openapi";
import { AccessKeyStore } from "./access-key-store";
import { AuditLog } from "./audit";
import { AccessControl } from "./guard";
import { mountAccessKeyRoutes, registerAccessKeyOpenApi, type AccessRouteDeps } from "./routes/access-key-routes";
import { mountAuditRoutes, registerAuditOpenApi } from "./routes/audit-routes";

export { AccessKeyStore, principalOf, type AccessKeyRecord } from "./access-key-store";
export { AuditLog, auditActor, type AuditActor, type AuditEntry } from "./audit";
export { AccessControl, presentedKey, type AccessDeclaration } from "./guard";
export {
  allows,
  collectionEntry,
  collectionFilterBeyond,
  missingFor,
  ROOT_PRINCIPAL,
  type AccessNeed,
  type AccessPrincipal,
} from "./principal";
export { SCOPES, type Scope } from "./scopes";
export { ApprovalRuleSchema, ruleHolds, ruleLooser, type ApprovalRule } from "./approval-rule";
export type { AccessRouteDeps };

/** Access control and the audit trail on the service's store. */
export function openAccess(
  db: SqlDriver,
  options: { rootKey?: string; requireAccessKey?: boolean; logger: Logger },
): { access: AccessControl; audit: AuditLog } {
  return {
    access: new AccessControl({
      store: new AccessKeyStore(db),
      rootKey: options.rootKey,
      requireAccessKey: options.requireAccessKey ?? false,
      logger: options.logger,
    }),
    audit: new AuditLog(db),
  };
}

export function createAccessRouter(deps: AccessRouteDeps): Router {
  const router = new Router();
  mountAccessKeyRoutes(router, deps);
  mountAuditRoutes(router, deps);
  return router;
}

export function registerAccessOpenApi(registry: OpenAPIRegistry): void {
  registry.registerComponent("securitySchemes", "AccessKey", {
    type: "http",
    scheme: "bearer",
    description: "An access key (nfto_…) or the root API_KEY; X-API-Key and API_KEY headers are accepted too.",
  });
  registerAccessKeyOpenApi(registry);
  registerAuditOpenApi(registry);
}
