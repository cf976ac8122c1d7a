import { randomBytes } from "node:crypto";
import type Router from "@koa/router";
import { z } from "zod";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { USERNAME_PATTERN } from "../schemas";
import { sessionTokenHash, type UserRouteDeps } from "./deps";

export const LoginQuery = z.object({
  username: z.string().min(1).openapi({ description: "The user name for login", example: "user1" }),
  password: z.string().min(1).max(1024).openapi({ description: "The password for login in clear text" }),
});

const SESSION_PREFIX = "logged in user session:";
const EXPIRED_SESSION_SWEEP_MS = 60_000;

/** GET /login: checks the password and answers a new session token. */
export function mountLogin(router: Router, deps: UserRouteDeps): void {
  let lastSweep = 0;

  router.get("/login", async (ctx) => {
    const parsed = LoginQuery.safeParse(ctx.query);
    const claimed = typeof ctx.query.username === "string" ? ctx.query.username : undefined;
    // Only well-formed names get a per-username counter: others cannot exist, and this bounds the keys.
    const limitedName = claimed !== undefined && USERNAME_PATTERN.test(claimed) ? claimed : undefined;

    // Counts this call as a failure in advance; a right password takes that back below.
    const admission = await deps.limiter.admitLogin(ctx.ip, limitedName);
    const callsLeft = { "X-Rate-Limit": String(admission.callsLeft) };
    if (!admission.allowed) {
      throw new ApiError("RATE_LIMITED", "Too many login attempts; retry later", undefined, {
        ...callsLeft,
        "Retry-After": String(admission.retryAfterSeconds),
      });
    }
    const invalid = () => new ApiError("INVALID_CREDENTIALS", "Invalid username or password", undefined, callsLeft);
    if (!parsed.success) throw invalid();
    const { username, password } = parsed.data;

    // Unknown users are checked against a dummy hash: same answer, same hashing work, same time.
    const user = limitedName !== undefined ? await deps.store.findUser(username) : null;
    const matches = await deps.hasher.verify(password, user?.passwordHash ?? (await deps.dummyHash()));
    if (!user || user.passwordHash === null || !matches) throw invalid();
    await deps.limiter.loginSucceeded(ctx.ip, username);

    // Hashes made with other params, or with scrypt before argon2id, are upgraded now that the password is known.
    if (deps.hasher.needsRehash(user.passwordHash)) {
      await deps.store.updateUser(username, { passwordHash: await deps.hasher.rehash(password) });
    }
    const now = deps.now();
    if (now - lastSweep > EXPIRED_SESSION_SWEEP_MS) {
      lastSweep = now;
      await deps.store.deleteExpiredSessions(new Date(now));
    }
    const token = randomBytes(32).toString("base64url");
    const expiresAt = new Date(now + deps.sessionTtlMs);
    if (!(await deps.store.createSession(sessionTokenHash(token), username, expiresAt))) throw invalid(); // deleted meanwhile

    ctx.set(callsLeft);
    ctx.set("X-Expires-After", expiresAt.toISOString());
    ctx.set("Cache-Control", "no-store");
    ctx.type = "application/json";
    ctx.body = JSON.stringify(`${SESSION_PREFIX}${token}`);
  });
}

export function registerLoginOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/v2/user/login",
    operationId: "loginUser",
    tags: ["user"],
    summary: "Logs user into the system",
    description:
      "Failed logins are limited per (username, client address) and per client address; unknown user and wrong " +
      "password answer alike. The token goes in `Authorization: Bearer <token>` or `api_key: <token>`.",
    request: { query: LoginQuery },
    responses: {
      200: {
        description: "The session, as a JSON string `logged in user session:<token>`",
        headers: {
          "X-Rate-Limit": { description: "Login calls left this hour for this client", schema: { type: "integer" } },
          "X-Expires-After": {
            description: "When the session expires (UTC)",
            schema: { type: "string", format: "date-time" },
          },
        },
        content: { "application/json": { schema: z.string().openapi({ example: "logged in user session:Qm9…" }) } },
      },
      400: errorResponse("INVALID_CREDENTIALS: wrong or missing username/password"),
      429: errorResponse("RATE_LIMITED: too many attempts; see Retry-After"),
    },
  });
}
