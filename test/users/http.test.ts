import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { openUserStore, type UserRouterDeps, type UserStore } from "../../server/users";
import { sessionTokenHash } from "../../server/users/routes/deps";
import { startPostgresServer, type PostgresServer } from "./postgres-server";
import { startUserServer, type Reply, type UserServer } from "./user-server";

const OK = { code: 200, type: "unknown", message: "ok" };
const SESSION = /^logged in user session:([A-Za-z0-9_-]{43})$/;

/** The backends the HTTP suite runs on; only PGlite has a data dir to reopen. */
const backends = [
  { name: "PGlite", restartable: true },
  { name: "PostgreSQL server", restartable: false },
] as const;

for (const backend of backends) {
  describe(`/v2/user over HTTP on ${backend.name}`, function () {
    let dataDir: string;
    let postgres: PostgresServer | undefined;
    let databaseUrl: string | undefined;
    let store: UserStore;
    let api: UserServer;
    const servers: UserServer[] = [];
    const logs: string[] = [];
    const passwords: string[] = [];
    let seq = 0;

    const fresh = (stem: string) => `${stem}-${++seq}`;
    /** A distinctive password, remembered so the last test can look for it in every output. */
    const secret = (label: string) => {
      const password = `Pw-${label}-${randomBytes(8).toString("hex")}`;
      passwords.push(password);
      return password;
    };
    const serve = async (deps: Partial<UserRouterDeps> = {}) => {
      // Generous failure limits on shared servers, so one test's failed logins cannot lock another's.
      const server = await startUserServer(
        store,
        { ...deps, rateLimits: { maxFailuresPerIp: 10_000, ...deps.rateLimits } },
        logs,
      );
      servers.push(server);
      return server;
    };
    const login = (username: string, password: string, server = api) =>
      server.call(
        "GET",
        `/v2/user/login?username=${encodeURIComponent(username)}&password=${encodeURIComponent(password)}`,
      );
    const expectError = (reply: Reply, status: number, code: string) => {
      expect(reply.status, reply.text).to.equal(status);
      expect(reply.json.error.code, reply.text).to.equal(code);
      expect(reply.headers.get("content-type")).to.equal("application/json; charset=utf-8");
    };
    const createUser = async (user: Record<string, unknown>) => {
      const reply = await api.call("POST", "/v2/user", { body: user });
      expect(reply.status, reply.text).to.equal(200);
      return reply;
    };

    before(async function () {
      dataDir = await mkdtemp(join(tmpdir(), "users-http-"));
      if (backend.name === "PostgreSQL server") {
        postgres = await startPostgresServer();
        databaseUrl = await postgres.createDatabase();
      }
      store = await openUserStore({ databaseUrl, dataDir });
      api = await serve();
    });

    after(async function () {
      for (const server of servers) await server.close();
      await store?.close();
      await postgres?.stop();
      await rm(dataDir, { recursive: true, force: true });
    });

    describe("POST /v2/user", function () {
      it("creates a user, answers Petstore's ApiResponse with its id, and GET answers it without a password", async function () {
        const username = fresh("alice");
        const password = secret("alice");
        const created = await createUser({
          id: 7,
          username,
          firstName: "Alice",
          lastName: "Liddell",
          email: "alice@example.com",
          password,
          phone: "555-0100",
          userStatus: 1,
        });
        expect(created.json).to.deep.equal({ code: 200, type: "unknown", message: "7" });

        const got = await api.call("GET", `/v2/user/${username}`);
        expect(got.status).to.equal(200);
        expect(got.headers.get("content-type")).to.equal("application/json; charset=utf-8");
        expect(got.headers.get("etag")).to.match(/^W\//);
        expect(got.json).to.deep.equal({
          id: "7",
          username,
          firstName: "Alice",
          lastName: "Liddell",
          email: "alice@example.com",
          phone: "555-0100",
          userStatus: 1,
        });
      });

      it("takes id as a JSON integer or a decimal string and answers it as an exact decimal string", async function () {
        const big = fresh("big");
        await createUser({ id: "9223372036854775807", username: big });
        expect((await api.call("GET", `/v2/user/${big}`)).json.id).to.equal("9223372036854775807");
        const small = fresh("small");
        await createUser({ id: -42, username: small });
        expect((await api.call("GET", `/v2/user/${small}`)).json.id).to.equal("-42");
        const generated = fresh("noid");
        const reply = await createUser({ username: generated, firstName: null });
        expect(reply.json.message).to.match(/^\d+$/);
        expect((await api.call("GET", `/v2/user/${generated}`)).json).to.deep.equal({
          id: reply.json.message,
          username: generated,
        });
      });

      it("reads a JSON body sent as text/plain, as swagger-client sends Petstore's user bodies", async function () {
        const username = fresh("plain");
        const reply = await api.call("POST", "/v2/user", {
          rawBody: JSON.stringify({ id: 3, username }),
          headers: { "Content-Type": "text/plain;charset=UTF-8" },
        });
        expect(reply.status, reply.text).to.equal(200);
        expect((await api.call("GET", `/v2/user/${username}`)).json).to.deep.equal({ id: "3", username });
      });

      for (const [what, contentType, rawBody] of [
        ["a form body", "application/x-www-form-urlencoded", "username=formed"],
        ["a text/plain body that is not JSON", "text/plain", "username=formed"],
        [
          "a text/plain body over 100 kB",
          "text/plain",
          JSON.stringify({ username: "big", firstName: "x".repeat(110_000) }),
        ],
      ]) {
        it(`answers 400 VALIDATION_ERROR for ${what}`, async function () {
          const reply = await api.call("POST", "/v2/user", { rawBody, headers: { "Content-Type": contentType } });
          expectError(reply, 400, "VALIDATION_ERROR");
        });
      }

      it("answers 409 USERNAME_TAKEN for an existing username", async function () {
        const username = fresh("dup");
        await createUser({ username, firstName: "First" });
        expectError(
          await api.call("POST", "/v2/user", { body: { username, firstName: "Second" } }),
          409,
          "USERNAME_TAKEN",
        );
        expect((await api.call("GET", `/v2/user/${username}`)).json.firstName).to.equal("First");
      });

      const invalidUsers: [string, { body?: unknown; rawBody?: string }, string][] = [
        ["a user without username", { body: { firstName: "Nobody" } }, "username"],
        ["a username with a space", { body: { username: "bad name" } }, "username"],
        ["a username of 65 characters", { body: { username: "a".repeat(65) } }, "username"],
        ["the reserved username login", { body: { username: "login" } }, "username"],
        ["a string id that is not a number", { body: { username: "x1", id: "12abc" } }, "id"],
        ["a fractional id", { body: { username: "x2", id: 1.5 } }, "id"],
        ["an id beyond int64", { body: { username: "x3", id: "9223372036854775808" } }, "id"],
        ["a JSON integer id beyond 2^53 (inexact)", { body: { username: "x4", id: 2 ** 53 + 2 } }, "id"],
        ["a userStatus beyond int32", { body: { username: "x5", userStatus: 2 ** 31 } }, "userStatus"],
        ["a userStatus as a string", { body: { username: "x6", userStatus: "1" } }, "userStatus"],
        ["a firstName that is a number", { body: { username: "x7", firstName: 5 } }, "firstName"],
        ["an array body", { body: [{ username: "x8" }] }, "(body)"],
        ["a non-JSON body", { rawBody: "{username:" }, "(body)"],
      ];
      for (const [what, request, path] of invalidUsers) {
        it(`answers 400 VALIDATION_ERROR naming ${path} for ${what}`, async function () {
          const reply = await api.call("POST", "/v2/user", request);
          expectError(reply, 400, "VALIDATION_ERROR");
          expect(reply.json.error.details.map((d: { path: string }) => d.path)).to.include(path);
        });
      }

      it("lets exactly one of 20 simultaneous creations of one username succeed; the rest get 409 USERNAME_TAKEN", async function () {
        const username = fresh("race");
        const replies = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            api.call("POST", "/v2/user", { body: { username, password: secret(`race${i}`), userStatus: i } }),
          ),
        );
        expect(replies.filter((r) => r.status === 200)).to.have.length(1);
        const refused = replies.filter((r) => r.status !== 200);
        expect(refused).to.have.length(19);
        for (const reply of refused) expectError(reply, 409, "USERNAME_TAKEN");
      });
    });

    for (const path of ["/v2/user/createWithList", "/v2/user/createWithArray"]) {
      describe(`POST ${path}`, function () {
        it("stores every user and answers {code:200, type:unknown, message:ok}", async function () {
          const names = [fresh("list"), fresh("list"), fresh("list")];
          const password = secret("list");
          const reply = await api.call("POST", path, {
            body: names.map((username, i) => ({ id: i + 1, username, password, userStatus: i })),
          });
          expect(reply.status, reply.text).to.equal(200);
          expect(reply.json).to.deep.equal(OK);
          for (const [i, username] of names.entries()) {
            expect((await api.call("GET", `/v2/user/${username}`)).json).to.deep.equal({
              id: String(i + 1),
              username,
              userStatus: i,
            });
          }
          expect((await login(names[2], password)).status).to.equal(200);
        });

        if (path.endsWith("List")) {
          it("refuses a batch of more than 1000 users with 400 VALIDATION_ERROR", async function () {
            const body = Array.from({ length: 1001 }, (_, i) => ({ username: `many-${i}` }));
            expectError(await api.call("POST", path, { body }), 400, "VALIDATION_ERROR");
            expectError(await api.call("GET", "/v2/user/many-0"), 404, "USER_NOT_FOUND");
          });
        }

        it("answers 200 for an empty array", async function () {
          const reply = await api.call("POST", path, { body: [] });
          expect(reply.status).to.equal(200);
          expect(reply.json).to.deep.equal(OK);
        });

        for (const [what, body] of [
          ["an object", { username: "solo" }],
          ["a string", "users"],
          ["a number", 5],
        ] as const) {
          it(`answers 400 VALIDATION_ERROR for ${what} instead of an array`, async function () {
            expectError(await api.call("POST", path, { body }), 400, "VALIDATION_ERROR");
          });
        }

        const badItems: [string, Record<string, unknown>, string][] = [
          ["a user without username", { firstName: "Anon" }, "1.username"],
          ["an id of the wrong type", { username: "bad-id", id: true }, "1.id"],
          ["an id beyond int64", { username: "bad-id2", id: "-9223372036854775809" }, "1.id"],
          ["a userStatus beyond int32", { username: "bad-status", userStatus: -(2 ** 31) - 1 }, "1.userStatus"],
          ["a password of the wrong type", { username: "bad-pw", password: 1234 }, "1.password"],
        ];
        for (const [what, item, detailPath] of badItems) {
          it(`stores nothing and answers 400 VALIDATION_ERROR (${detailPath}) when one item is ${what}`, async function () {
            const good = fresh("good");
            const reply = await api.call("POST", path, {
              body: [{ username: good }, item, { username: fresh("good") }],
            });
            expectError(reply, 400, "VALIDATION_ERROR");
            expect(reply.json.error.details.map((d: { path: string }) => d.path)).to.include(detailPath);
            expectError(await api.call("GET", `/v2/user/${good}`), 404, "USER_NOT_FOUND");
          });
        }

        it("stores nothing and answers 409 USERNAME_TAKEN when one username exists", async function () {
          const existing = fresh("exists");
          await createUser({ username: existing });
          const [before, after] = [fresh("before"), fresh("after")];
          const reply = await api.call("POST", path, {
            body: [{ username: before }, { username: existing }, { username: after }],
          });
          expectError(reply, 409, "USERNAME_TAKEN");
          expect(reply.json.error.message).to.include(existing);
          expectError(await api.call("GET", `/v2/user/${before}`), 404, "USER_NOT_FOUND");
          expectError(await api.call("GET", `/v2/user/${after}`), 404, "USER_NOT_FOUND");
        });

        it("stores nothing and answers 409 USERNAME_TAKEN when a username repeats in the batch", async function () {
          const [once, twice] = [fresh("once"), fresh("twice")];
          const reply = await api.call("POST", path, {
            body: [{ username: once }, { username: twice }, { username: twice }],
          });
          expectError(reply, 409, "USERNAME_TAKEN");
          expectError(await api.call("GET", `/v2/user/${once}`), 404, "USER_NOT_FOUND");
          expectError(await api.call("GET", `/v2/user/${twice}`), 404, "USER_NOT_FOUND");
        });
      });
    }

    describe("GET /v2/user/login", function () {
      let username: string;
      let password: string;
      before(async function () {
        username = fresh("login");
        password = secret("login");
        await createUser({ username, password });
      });

      it("answers the session as a JSON string with X-Rate-Limit and X-Expires-After, and stores the session", async function () {
        const started = Date.now();
        const reply = await login(username, password);
        expect(reply.status).to.equal(200);
        expect(reply.headers.get("content-type")).to.equal("application/json; charset=utf-8");
        expect(reply.headers.get("cache-control")).to.equal("no-store");
        expect(reply.json).to.be.a("string").and.to.match(SESSION);
        expect(reply.headers.get("x-rate-limit")).to.match(/^\d+$/);
        const expires = Date.parse(reply.headers.get("x-expires-after") ?? "");
        expect(reply.headers.get("x-expires-after")).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        expect(expires - started).to.be.within(3_590_000, 3_610_000);
        const token = SESSION.exec(reply.json)![1];
        const session = await store.findSession(sessionTokenHash(token), new Date());
        expect(session?.username).to.equal(username);
      });

      it("counts the calls left down in X-Rate-Limit", async function () {
        const first = Number((await login(username, password)).headers.get("x-rate-limit"));
        const second = Number((await login(username, password)).headers.get("x-rate-limit"));
        expect(second).to.equal(first - 1);
      });

      it("answers the same 400 INVALID_CREDENTIALS for a wrong password and for an unknown user", async function () {
        const wrong = await login(username, "not-the-password");
        const unknown = await login(fresh("ghost"), password);
        expectError(wrong, 400, "INVALID_CREDENTIALS");
        expectError(unknown, 400, "INVALID_CREDENTIALS");
        expect(unknown.json).to.deep.equal(wrong.json);
      });

      const missing: [string, string][] = [
        ["no parameters", ""],
        ["no password", "?username=someone"],
        ["an empty password", "?username=someone&password="],
        ["no username", "?password=whatever"],
        ["a malformed username", "?username=no%20such%20name&password=whatever"],
        ["a repeated username", "?username=a&username=b&password=whatever"],
      ];
      for (const [what, query] of missing) {
        it(`answers 400 INVALID_CREDENTIALS for ${what}`, async function () {
          expectError(await api.call("GET", `/v2/user/login${query}`), 400, "INVALID_CREDENTIALS");
        });
      }

      it("takes about as long for an unknown user as for a wrong password (both pay one scrypt verify)", async function () {
        const unlimited = await serve({ rateLimits: { maxFailuresPerUsername: 1000 } });
        const time = async (name: string) => {
          const started = process.hrtime.bigint();
          const reply = await login(name, "wrong-password", unlimited);
          expect(reply.status).to.equal(400);
          return Number(process.hrtime.bigint() - started) / 1e6;
        };
        const known: number[] = [];
        const unknown: number[] = [];
        for (let i = 0; i < 5; i++) {
          known.push(await time(username));
          unknown.push(await time(fresh("nobody")));
        }
        const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
        const [k, u] = [median(known), median(unknown)];
        expect(u, `unknown ${u} ms vs wrong password ${k} ms`).to.be.greaterThan(10);
        expect(u / k, `unknown ${u} ms vs wrong password ${k} ms`).to.be.within(0.5, 2);
      });

      it("stores passwords only as salted scrypt hashes, and rehashes old params at login", async function () {
        const [a, b] = [fresh("salt"), fresh("salt")];
        const shared = secret("shared");
        // A server with cheaper params stands in for hashes made before the params were raised.
        const old = await serve({ scryptParams: { N: 1024, r: 8, p: 1 } });
        await old.call("POST", "/v2/user/createWithList", {
          body: [
            { username: a, password: shared },
            { username: b, password: shared },
          ],
        });
        const [hashA, hashB] = [(await store.findUser(a))!.passwordHash!, (await store.findUser(b))!.passwordHash!];
        expect(hashA).to.match(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
        expect(hashA).to.not.equal(hashB);
        expect(hashA).to.not.include(shared);

        expect((await login(a, shared)).status).to.equal(200);
        expect((await store.findUser(a))!.passwordHash).to.match(/^scrypt\$16384\$8\$1\$/);
        expect((await login(a, shared)).status).to.equal(200);
      });
    });

    describe("GET /v2/user/logout", function () {
      it("answers ok without a session, as Petstore clients call it", async function () {
        const reply = await api.call("GET", "/v2/user/logout");
        expect(reply.status).to.equal(200);
        expect(reply.json).to.deep.equal(OK);
      });

      it("ends the session named by an Authorization Bearer token", async function () {
        const username = fresh("logout");
        const password = secret("logout");
        await createUser({ username, password });
        const token = SESSION.exec((await login(username, password)).json)![1];
        expect(await store.findSession(sessionTokenHash(token), new Date())).to.not.equal(null);
        const reply = await api.call("GET", "/v2/user/logout", { headers: { Authorization: `Bearer ${token}` } });
        expect(reply.json).to.deep.equal(OK);
        expect(await store.findSession(sessionTokenHash(token), new Date())).to.equal(null);
      });
    });

    describe("GET /v2/user/{username}", function () {
      it("answers 404 USER_NOT_FOUND for an unknown user", async function () {
        expectError(await api.call("GET", `/v2/user/${fresh("ghost")}`), 404, "USER_NOT_FOUND");
      });

      for (const bad of ["bad%20name", "a".repeat(65), "semi%3Bcolon", "%E0%A4%A"]) {
        it(`answers 400 INVALID_USERNAME for ${bad.slice(0, 20)}`, async function () {
          expectError(await api.call("GET", `/v2/user/${bad}`), 400, "INVALID_USERNAME");
        });
      }

      it("answers 405 METHOD_NOT_ALLOWED for POST on /v2/user/login", async function () {
        expectError(await api.call("POST", "/v2/user/login", { body: {} }), 405, "METHOD_NOT_ALLOWED");
      });
    });

    describe("PUT /v2/user/{username}", function () {
      it("sets the fields present and keeps the others (null counts as absent)", async function () {
        const username = fresh("put");
        await createUser({ id: 5, username, firstName: "Old", lastName: "Name", email: "old@example.com" });
        const reply = await api.call("PUT", `/v2/user/${username}`, {
          body: { firstName: "New", lastName: null, userStatus: 2 },
        });
        expect(reply.status).to.equal(200);
        expect(reply.json).to.deep.equal({ code: 200, type: "unknown", message: "5" });
        expect((await api.call("GET", `/v2/user/${username}`)).json).to.deep.equal({
          id: "5",
          username,
          firstName: "New",
          lastName: "Name",
          email: "old@example.com",
          userStatus: 2,
        });
      });

      it("changes the password: the old one stops working and the new one logs in", async function () {
        const username = fresh("pw");
        const [oldPassword, newPassword] = [secret("old"), secret("new")];
        await createUser({ username, password: oldPassword });
        expect((await api.call("PUT", `/v2/user/${username}`, { body: { password: newPassword } })).status).to.equal(
          200,
        );
        expectError(await login(username, oldPassword), 400, "INVALID_CREDENTIALS");
        expect((await login(username, newPassword)).status).to.equal(200);
      });

      it("renames a user, and answers 409 USERNAME_TAKEN for a name in use", async function () {
        const [name, renamed, other] = [fresh("mv"), fresh("mv-new"), fresh("mv-other")];
        await createUser({ username: name });
        await createUser({ username: other });
        expect((await api.call("PUT", `/v2/user/${name}`, { body: { username: renamed } })).status).to.equal(200);
        expectError(await api.call("GET", `/v2/user/${name}`), 404, "USER_NOT_FOUND");
        expect((await api.call("GET", `/v2/user/${renamed}`)).json.username).to.equal(renamed);
        expectError(await api.call("PUT", `/v2/user/${renamed}`, { body: { username: other } }), 409, "USERNAME_TAKEN");
      });

      it("answers 404 USER_NOT_FOUND, 400 INVALID_USERNAME and 400 VALIDATION_ERROR", async function () {
        expectError(
          await api.call("PUT", `/v2/user/${fresh("ghost")}`, { body: { firstName: "x" } }),
          404,
          "USER_NOT_FOUND",
        );
        expectError(
          await api.call("PUT", "/v2/user/bad%20name", { body: { firstName: "x" } }),
          400,
          "INVALID_USERNAME",
        );
        const username = fresh("put-bad");
        await createUser({ username });
        expectError(
          await api.call("PUT", `/v2/user/${username}`, { body: { userStatus: "high" } }),
          400,
          "VALIDATION_ERROR",
        );
        expectError(await api.call("PUT", `/v2/user/${username}`, { body: [] }), 400, "VALIDATION_ERROR");
        expectError(
          await api.call("PUT", `/v2/user/${username}`, { body: { username: "no way" } }),
          400,
          "VALIDATION_ERROR",
        );
      });
    });

    describe("DELETE /v2/user/{username}", function () {
      it("deletes the user (message: its username); it no longer exists or logs in", async function () {
        const username = fresh("bye");
        const password = secret("bye");
        await createUser({ username, password });
        const reply = await api.call("DELETE", `/v2/user/${username}`);
        expect(reply.status).to.equal(200);
        expect(reply.json).to.deep.equal({ code: 200, type: "unknown", message: username });
        expectError(await api.call("GET", `/v2/user/${username}`), 404, "USER_NOT_FOUND");
        expectError(await login(username, password), 400, "INVALID_CREDENTIALS");
        expectError(await api.call("DELETE", `/v2/user/${username}`), 404, "USER_NOT_FOUND");
      });

      it("answers 400 INVALID_USERNAME for an invalid username", async function () {
        expectError(await api.call("DELETE", "/v2/user/bad%20name"), 400, "INVALID_USERNAME");
      });
    });

    describe("login rate limits", function () {
      let username: string;
      let password: string;
      before(async function () {
        username = fresh("limited");
        password = secret("limited");
        await createUser({ username, password });
      });

      it("locks a username after repeated failures: 429 RATE_LIMITED with Retry-After, even for the right password", async function () {
        const limited = await serve({ rateLimits: { maxFailuresPerUsername: 3 } });
        for (let i = 0; i < 3; i++) expectError(await login(username, "wrong", limited), 400, "INVALID_CREDENTIALS");
        const reply = await login(username, password, limited);
        expectError(reply, 429, "RATE_LIMITED");
        expect(Number(reply.headers.get("retry-after"))).to.be.within(1, 15 * 60);
        // Another username from the same client is not affected.
        expectError(await login(fresh("other"), "wrong", limited), 400, "INVALID_CREDENTIALS");
      });

      it("locks an unknown username exactly like a known one (the lock does not reveal who exists)", async function () {
        const limited = await serve({ rateLimits: { maxFailuresPerUsername: 2 } });
        const ghost = fresh("ghost");
        for (let i = 0; i < 2; i++) expectError(await login(ghost, "wrong", limited), 400, "INVALID_CREDENTIALS");
        expectError(await login(ghost, "wrong", limited), 429, "RATE_LIMITED");
      });

      it("limits failures per client IP across usernames, and lifts the lock when the window has passed", async function () {
        let now = Date.now();
        const limited = await serve({ now: () => now, rateLimits: { maxFailuresPerIp: 3, failureWindowMs: 60_000 } });
        for (let i = 0; i < 3; i++)
          expectError(await login(fresh("spray"), "wrong", limited), 400, "INVALID_CREDENTIALS");
        const reply = await login(username, password, limited);
        expectError(reply, 429, "RATE_LIMITED");
        expect(Number(reply.headers.get("retry-after"))).to.be.within(1, 60);
        now += 60_000;
        expect((await login(username, password, limited)).status).to.equal(200);
      });

      it("answers 429 with Retry-After once the calls per hour are used up", async function () {
        const limited = await serve({ rateLimits: { callsPerHour: 2 } });
        expect((await login(username, password, limited)).headers.get("x-rate-limit")).to.equal("1");
        expect((await login(username, password, limited)).headers.get("x-rate-limit")).to.equal("0");
        const reply = await login(username, password, limited);
        expectError(reply, 429, "RATE_LIMITED");
        expect(Number(reply.headers.get("retry-after"))).to.be.within(1, 3600);
      });
    });

    describe("restart", function () {
      if (!backend.restartable) return;
      it("keeps users when the PGlite store is closed and reopened on the same directory", async function () {
        const username = fresh("durable");
        const password = secret("durable");
        await createUser({ username, password });
        await api.close();
        await store.close();

        store = await openUserStore({ dataDir });
        api = await serve();
        expect((await login(username, password)).status).to.equal(200);
        expect((await api.call("GET", `/v2/user/${username}`)).json.username).to.equal(username);
      });
    });

    describe("after every call above", function () {
      it("never puts a password in a response or a log line", async function () {
        const transcripts = servers.flatMap((server) => server.transcript);
        expect(passwords.length).to.be.greaterThan(10);
        expect(transcripts.length).to.be.greaterThan(50);
        expect(logs.length).to.be.greaterThan(50);
        for (const password of passwords) {
          for (const text of [...transcripts, ...logs]) expect(text).to.not.include(password);
        }
        for (const line of logs) expect(line).to.not.match(/password=/);
      });
    });
  });
}
