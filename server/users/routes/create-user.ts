import type Router from "@koa/router";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { readJsonBody } from "../../http/json-body";
import { parseInput } from "../../http/validation";
import { ApiResponse, NewUserInput, apiResponse } from "../schemas";
import { creationAllowed, toUserFields, usernameMustBeFree, usernamesMustBeFree, type UserRouteDeps } from "./deps";

export const CreateUserBody = NewUserInput;

/** POST / (i.e. /v2/user): creates one user; the message is its id, as Petstore answers. */
export function mountCreateUser(router: Router, deps: UserRouteDeps): void {
  router.post("/", async (ctx) => {
    const body = await readJsonBody(ctx);
    await creationAllowed(ctx, deps);
    const input = parseInput(CreateUserBody, body);
    await usernamesMustBeFree(deps.store, [input.username]);
    const passwordHash = input.password != null ? await deps.hasher.hash(input.password, "account") : undefined;
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
    description: "Rate limited per client address (60 creation requests a minute by default).",
    request: { body: { required: true, content: { "application/json": { schema: CreateUserBody } } } },
    responses: {
      200: {
        description: "Created; `message` is the user's id",
        content: { "application/json": { schema: ApiResponse } },
      },
      400: errorResponse("VALIDATION_ERROR: not a user object, a bad field, or no username"),
      409: errorResponse("USERNAME_TAKEN"),
      429: errorResponse("RATE_LIMITED: too many creation requests from this address; see Retry-After"),
    },
  });
}
