import type Router from "@koa/router";
import type { OpenAPIRegistry } from "../../http/openapi";
import { ApiResponse, apiResponse } from "../schemas";
import { SESSION_SECURITY } from "./session-security";
import { sessionToken, sessionTokenHash, type UserRouteDeps } from "./deps";

/**
 * GET /logout: ends the session the request carries (Bearer or api_key), if any. Always 200:
 * Petstore clients call it with no session at all.
 */
export function mountLogout(router: Router, deps: UserRouteDeps): void {
  router.get("/logout", async (ctx) => {
    const token = sessionToken(ctx);
    if (token) await deps.store.deleteSession(sessionTokenHash(token));
    ctx.body = apiResponse("ok");
  });
}

export function registerLogoutOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/v2/user/logout",
    operationId: "logoutUser",
    tags: ["user"],
    summary: "Logs out current logged in user session",
    description: "Ends the session sent with it; without one, a no-op that still answers ok.",
    security: [{}, ...SESSION_SECURITY],
    responses: { 200: { description: "Logged out", content: { "application/json": { schema: ApiResponse } } } },
  });
}
