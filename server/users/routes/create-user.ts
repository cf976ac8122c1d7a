import type Router from "@koa/router";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import { hashPassword } from "../password";
import { ApiResponse, NewUserInput, apiResponse } from "../schemas";
import { toUserFields, usernameMustBeFree, type UserRouteDeps } from "./deps";

export const CreateUserBody = NewUserInput;

/** POST / (i.e. /v2/user): creates one user; the message is its id, as Petstore answers. */
export function mountCreateUser(router: Router, deps: UserRouteDeps): void {
  router.post("/", async (ctx) => {
    const input = parseInput(CreateUserBody, ctx.request.body);
    const passwordHash = input.password != null ? await hashPassword(input.password, deps.scryptParams) : undefined;
    const [user] = await usernameMustBeFree(() =>
      deps.store.createUsers([{ ...toUserFields(input, passwordHash), username: input.username }]),
    );
    ctx.body = apiResponse(user.id.toString());
  });
}

export function registerCreateUserOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/v2/user",
    operationId: "createUser",
    tags: ["user"],
    summary: "Create user",
    request: { body: { required: true, content: { "application/json": { schema: CreateUserBody } } } },
    responses: {
      200: {
        description: "Created; `message` is the user's id",
        content: { "application/json": { schema: ApiResponse } },
      },
      400: errorResponse("VALIDATION_ERROR: not a user object, a bad field, or no username"),
      409: errorResponse("USERNAME_TAKEN"),
    },
  });
}
