import type Router from "@koa/router";
import { z } from "zod";
import type { OpenAPIRegistry } from "../../http/openapi";
import { ApiResponse, apiResponse } from "../schemas";
import { sessionTokenHash, type UserRouteDeps } from "./deps";

/** Petstore's logout takes no parameters; a client that has a token may send it as a Bearer. */
export const LogoutHeaders = z.object({
  authorization: z.string().optional().openapi({ description: "`Bearer <token>`: ends that session" }),
});

/** GET /logout: ends the session named by `Authorization: Bearer <token>`, if any. Always 200. */
export function mountLogout(router: Router, deps: UserRouteDeps): void {
  router.get("/logout", async (ctx) => {
    const token = /^Bearer\s+(\S+)$/i.exec(ctx.get("Authorization"))?.[1];
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
    request: { headers: LogoutHeaders },
    responses: { 200: { description: "Logged out", content: { "application/json": { schema: ApiResponse } } } },
  });
}
