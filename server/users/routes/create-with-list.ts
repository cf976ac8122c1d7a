import type Router from "@koa/router";
import { z } from "zod";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import { hashPassword } from "../password";
import { ApiResponse, NewUserInput, apiResponse } from "../schemas";
import { toUserFields, usernameMustBeFree, type UserRouteDeps } from "./deps";

export const MAX_USERS_PER_BATCH = 1000;

export const CreateUsersBody = z.array(NewUserInput).max(MAX_USERS_PER_BATCH);

/** POST /createWithList and /createWithArray (the same operation twice in Petstore): all or none. */
export function mountCreateWithList(router: Router, deps: UserRouteDeps): void {
  router.post(["/createWithList", "/createWithArray"], async (ctx) => {
    const inputs = parseInput(CreateUsersBody, ctx.request.body);
    // Hash before the transaction opens, so slow scrypt work never holds database locks.
    const users = await Promise.all(
      inputs.map(async (input) => {
        const passwordHash = input.password != null ? await hashPassword(input.password, deps.scryptParams) : undefined;
        return { ...toUserFields(input, passwordHash), username: input.username };
      }),
    );
    await usernameMustBeFree(() => deps.store.createUsers(users));
    ctx.body = apiResponse("ok");
  });
}

export function registerCreateWithListOpenApi(registry: OpenAPIRegistry): void {
  for (const [path, operationId] of [
    ["/v2/user/createWithList", "createUsersWithListInput"],
    ["/v2/user/createWithArray", "createUsersWithArrayInput"],
  ] as const) {
    registry.registerPath({
      method: "post",
      path,
      operationId,
      tags: ["user"],
      summary: `Creates users from a JSON array (at most ${MAX_USERS_PER_BATCH}); all are stored or none`,
      request: { body: { required: true, content: { "application/json": { schema: CreateUsersBody } } } },
      responses: {
        200: { description: "All stored", content: { "application/json": { schema: ApiResponse } } },
        400: errorResponse("VALIDATION_ERROR: not an array, a bad field, or a user without username"),
        409: errorResponse("USERNAME_TAKEN: a username exists already or repeats in the batch"),
      },
    });
  }
}
