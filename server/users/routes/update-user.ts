import type Router from "@koa/router";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import { hashPassword } from "../password";
import { ApiResponse, UserInput, UsernameParams, apiResponse } from "../schemas";
import { toUserFields, usernameMustBeFree, usernameParam, type UserRouteDeps } from "./deps";

export const UpdateUserBody = UserInput;

/**
 * PUT /{username}: sets the fields present in the body (null or absent: unchanged); a different
 * `username` renames the user, keeping its sessions. The message is the user's id.
 */
export function mountUpdateUser(router: Router, deps: UserRouteDeps): void {
  router.put("/:username", async (ctx) => {
    const username = usernameParam(ctx.params);
    const input = parseInput(UpdateUserBody, ctx.request.body);
    const passwordHash = input.password != null ? await hashPassword(input.password, deps.scryptParams) : undefined;
    const user = await usernameMustBeFree(() => deps.store.updateUser(username, toUserFields(input, passwordHash)));
    if (!user) throw new ApiError("USER_NOT_FOUND", "User not found");
    ctx.body = apiResponse(user.id.toString());
  });
}

export function registerUpdateUserOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "put",
    path: "/v2/user/{username}",
    operationId: "updateUser",
    tags: ["user"],
    summary: "Updated user",
    request: {
      params: UsernameParams,
      body: { required: true, content: { "application/json": { schema: UpdateUserBody } } },
    },
    responses: {
      200: {
        description: "Updated; `message` is the user's id",
        content: { "application/json": { schema: ApiResponse } },
      },
      400: errorResponse("INVALID_USERNAME in the path, or VALIDATION_ERROR in the body"),
      404: errorResponse("USER_NOT_FOUND"),
      409: errorResponse("USERNAME_TAKEN: renaming to a name that exists"),
    },
  });
}
