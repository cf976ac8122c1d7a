import type Router from "@koa/router";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { readJsonBody } from "../../http/json-body";
import { parseInput } from "../../http/validation";
import { ApiResponse, UserInput, UsernameParams, apiResponse } from "../schemas";
import { SESSION_SECURITY } from "./session-security";
import {
  requireSessionOf,
  sessionToken,
  sessionTokenHash,
  toUserFields,
  usernameMustBeFree,
  usernameParam,
  usernamesMustBeFree,
  type UserRouteDeps,
} from "./deps";

export const UpdateUserBody = UserInput;

/**
 * PUT /{username}, with a live session of that user: sets the fields present in the body (null
 * or absent: unchanged); a different `username` renames the user, keeping its sessions. A new
 * password ends every other session of the user. The message is the user's id.
 */
export function mountUpdateUser(router: Router, deps: UserRouteDeps): void {
  router.put("/:username", async (ctx) => {
    const username = usernameParam(ctx.params);
    await requireSessionOf(ctx, deps, username);
    const input = parseInput(UpdateUserBody, await readJsonBody(ctx));
    if (input.username != null && input.username !== username) await usernamesMustBeFree(deps.store, [input.username]);
    const passwordHash = input.password != null ? await deps.hasher.hash(input.password, "account") : undefined;
    const user = await usernameMustBeFree(() => deps.store.updateUser(username, toUserFields(input, passwordHash)));
    if (!user) throw new ApiError("USER_NOT_FOUND", "User not found"); // deleted since the session check
    if (passwordHash !== undefined) {
      await deps.store.deleteOtherSessions(user.username, sessionTokenHash(sessionToken(ctx)!));
    }
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
    description:
      "Needs a live session of this user (the token login answers). A new password ends the user's other sessions.",
    security: SESSION_SECURITY,
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
      401: errorResponse("UNAUTHORIZED: no live session (none sent, unknown, expired or logged out)"),
      403: errorResponse("FORBIDDEN: the session is another user's"),
      404: errorResponse("USER_NOT_FOUND"),
      409: errorResponse("USERNAME_TAKEN: renaming to a name that exists"),
    },
  });
}
