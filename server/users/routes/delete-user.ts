import type Router from "@koa/router";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { ApiResponse, UsernameParams, apiResponse } from "../schemas";
import { usernameParam, type UserRouteDeps } from "./deps";

/** DELETE /{username}: removes the user and its sessions; the message is the username. */
export function mountDeleteUser(router: Router, deps: UserRouteDeps): void {
  router.delete("/:username", async (ctx) => {
    const username = usernameParam(ctx.params);
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
    request: { params: UsernameParams },
    responses: {
      200: {
        description: "Deleted; `message` is the username",
        content: { "application/json": { schema: ApiResponse } },
      },
      400: errorResponse("INVALID_USERNAME"),
      404: errorResponse("USER_NOT_FOUND"),
    },
  });
}
