import type Router from "@koa/router";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { ApiResponse, UsernameParams, apiResponse } from "../schemas";
import { SESSION_SECURITY } from "./session-security";
import { requireSessionOf, usernameParam, type UserRouteDeps } from "./deps";

/** DELETE /{username}, with a live session of that user: removes the user and its sessions; the message is the username. */
export function mountDeleteUser(router: Router, deps: UserRouteDeps): void {
  router.delete("/:username", async (ctx) => {
    const username = usernameParam(ctx.params);
    await requireSessionOf(ctx, deps, username);
    if (!(await deps.store.deleteUser(username))) throw new ApiError("USER_NOT_FOUND", "User not found");
    ctx.body = apiResponse(username);
  });
}

export function registerDeleteUserOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "delete",
    path: "/v2/user/{username}",
    operationId: "deleteUser",
    tags: ["user"],
    summary: "Delete user",
    description: "Needs a live session of this user (the token login answers); the user's sessions end with it.",
    security: SESSION_SECURITY,
    request: { params: UsernameParams },
    responses: {
      200: {
        description: "Deleted; `message` is the username",
        content: { "application/json": { schema: ApiResponse } },
      },
      400: errorResponse("INVALID_USERNAME"),
      401: errorResponse("UNAUTHORIZED: no live session (none sent, unknown, expired or logged out)"),
      403: errorResponse("FORBIDDEN: the session is another user's"),
      404: errorResponse("USER_NOT_FOUND"),
    },
  });
}
