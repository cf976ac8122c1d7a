import type Router from "@koa/router";
import { z } from "zod";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { readJsonBody } from "../../http/json-body";
import { parseInput } from "../../http/validation";
import { ApiResponse, NewUserInput, apiResponse } from "../schemas";
import { UsernameTakenError } from "../store";
import { creationAllowed, toUserFields, usernameMustBeFree, usernamesMustBeFree, type UserRouteDeps } from "./deps";

export const MAX_USERS_PER_BATCH = 1000;

export const CreateUsersBody = z.array(NewUserInput).max(MAX_USERS_PER_BATCH);

/** Status for a request whose client went away before its answer (nginx's "client closed request"). */
const CLIENT_CLOSED_REQUEST = 499;

/**
 * POST /createWithList and /createWithArray (the same operation twice in Petstore): all or none.
 * Everything that can refuse the batch is checked before the first password is hashed; the
 * hashes then run in the scheduler's batch lane, behind logins.
 */
export function mountCreateWithList(router: Router, deps: UserRouteDeps): void {
  router.post(["/createWithList", "/createWithArray"], async (ctx) => {
    const body = await readJsonBody(ctx);
    await creationAllowed(ctx, deps);
    const inputs = parseInput(CreateUsersBody, body);
    const names = inputs.map((input) => input.username);
    const repeated = firstRepeated(names);
    if (repeated !== undefined) throw new ApiError("USERNAME_TAKEN", new UsernameTakenError(repeated).message);
    await usernamesMustBeFree(deps.store, names);

    // A client that hangs up stops the batch: its waiting hashes never run.
    const clientGone = new AbortController();
    ctx.res.once("close", () => {
      if (!ctx.res.writableFinished) clientGone.abort(new Error("client closed the request"));
    });
    // Hashed before the transaction opens, so slow hashing never holds database locks.
    const hashing = Promise.all(
      inputs.map(async (input) => {
        const passwordHash =
          input.password != null ? await deps.hasher.hash(input.password, "batch", clientGone.signal) : undefined;
        return { ...toUserFields(input, passwordHash), username: input.username };
      }),
    );
    const users = await hashing.catch((err) => {
      if (clientGone.signal.aborted) return null;
      throw err;
    });
    if (users === null) {
      ctx.status = CLIENT_CLOSED_REQUEST; // for the access log: nobody is left to read an answer
      return;
    }
    await usernameMustBeFree(() => deps.store.createUsers(users));
    ctx.body = apiResponse("ok");
  });
}

function firstRepeated(names: string[]): string | undefined {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
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
      description:
        "The whole batch is validated, and repeated or existing usernames refused, before any password is hashed. " +
        "Rate limited per client address with the other creation requests.",
      request: { body: { required: true, content: { "application/json": { schema: CreateUsersBody } } } },
      responses: {
        200: { description: "All stored", content: { "application/json": { schema: ApiResponse } } },
        400: errorResponse("VALIDATION_ERROR: not an array, a bad field, or a user without username"),
        409: errorResponse("USERNAME_TAKEN: a username exists already or repeats in the batch"),
        429: errorResponse("RATE_LIMITED: too many creation requests from this address; see Retry-After"),
      },
    });
  }
}
