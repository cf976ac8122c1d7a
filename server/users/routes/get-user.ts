import type Router from "@koa/router";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { UserOutput, UsernameParams } from "../schemas";
import { toUserOutput, usernameParam, type UserRouteDeps } from "./deps";

/** GET /{username}: the user without any password field. */
export function mountGetUser(router: Router, deps: UserRouteDeps): void {
  router.get("/:username", async (ctx) => {
    const user = await deps.store.findUser(usernameParam(ctx.params));
    if (!user) throw new ApiError("USER_NOT_FOUND", "User not found");
    ctx.body = toUserOutput(user);
  });
}

export function registerGetUserOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/v2/user/{username}",
    operationId: "getUserByName",
    tags: ["user"],
    summary: "Get user by user name",
    request: { params: UsernameParams },
    responses: {
      200: { description: "The user", content: { "application/json": { schema: UserOutput } } },
      400: errorResponse("INVALID_USERNAME"),
      404: errorResponse("USER_NOT_FOUND"),
    },
  });
}
