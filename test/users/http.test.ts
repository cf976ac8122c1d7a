import { randomBytes, scryptSync } from "node:crypto";
import { expect } from "chai";
import { hashPassword, verifyPassword } from "../../server/users/password";
import { sessionTokenHash } from "../../server/users/routes/deps";
import {
  BACKENDS,
  OK,
  SESSION,
  bearer,
  expectError,
  login as loginOn,
  openFixture,
  secretIn,
  sessionOf,
  type UserFixture,
} from "./fixture";
import type { UserServer } from "./user-server";

for (const backend of BACKENDS) {
  describe(`/v2/user over HTTP on ${backend.name}`, function () {
    let fixture: UserFixture;
    let api: UserServer;
    const passwords: string[] = [];
    let seq = 0;

    const fresh = (stem: string) => `${stem}-${++seq}`;
    const secret = secretIn(passwords);
    const serve: UserFixture["serve"] = (deps, options) => fixture.serve(deps, options);
    const login = (username: string, password: string, server = api) => loginOn(server, username, password);
    const createUser = async (user: Record<string, unknown>) => {
      const reply = await api.call("POST", "/v2/user", { body: user });
      expect(reply.status, reply.text).to.equal(200);
      return reply;
    };
    /** A new user with a password, and a session of it. */
    const userWithSession = async (stem: string, fields: Record<string, unknown> = {}) => {
      const username = fresh(stem);
      const password = secret(stem);
      await createUser({ username, password, ...fields });
      return { username, password, token: await sessionOf(api, username, password) };
    };

    before(async function () {
      fixture = await openFixture(backend);
      api = await serve();
    });

    after(async function () {
      await fixture?.close();
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
        const session = await fixture.store.findSession(sessionTokenHash(token), new Date());
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

      it("takes about as long for an unknown user as for a wrong password (both pay one argon2id verify)", async function () {
        const unlimited = await serve({ rateLimits: { maxFailuresPerUsernameAndIp: 1000 } });
        const time = async (name: string) => {
          const started = process.hrtime.bigint();
          const reply = await login(name, "wrong-password", unlimited);
          expect(reply.status).to.equal(400);
          return Number(process.hrtime.bigint() - started) / 1e6;
        };
        // One argon2id verify alone, on this machine: the floor an answer that pays one cannot beat.
        // (A fixed number of ms fails on a fast machine: CI's Node 24 verified in under 10 ms.)
        const encoded = await hashPassword("calibration");
        const verify = async () => {
          const started = process.hrtime.bigint();
          await verifyPassword("wrong-password", encoded);
          return Number(process.hrtime.bigint() - started) / 1e6;
        };
        const known: number[] = [];
        const unknown: number[] = [];
        const alone: number[] = [];
        for (let i = 0; i < 9; i++) {
          known.push(await time(username));
          unknown.push(await time(fresh("nobody")));
          alone.push(await verify());
        }
        // The fastest of each: what a busy machine adds to a timing only ever lengthens it, so the
        // minimum is the cost itself (medians of 5 failed once beside the benches: 23 ms against 74).
        const [k, u, v] = [Math.min(...known), Math.min(...unknown), Math.min(...alone)];
        const figures = `unknown ${u} ms vs wrong password ${k} ms; one verify alone ${v} ms`;
        expect(u, figures).to.be.greaterThan(0.7 * v);
        expect(u / k, figures).to.be.within(0.5, 2);
      });

      it("stores passwords only as salted argon2id hashes at OWASP's m=19 MiB, t=2, p=1", async function () {
        const [a, b] = [fresh("salt"), fresh("salt")];
        const shared = secret("shared");
        await api.call("POST", "/v2/user/createWithList", {
          body: [
            { username: a, password: shared },
            { username: b, password: shared },
          ],
        });
        const [hashA, hashB] = [
          (await fixture.store.findUser(a))!.passwordHash!,
          (await fixture.store.findUser(b))!.passwordHash!,
        ];
        expect(hashA).to.match(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
        expect(hashA).to.not.equal(hashB);
        expect(hashA).to.not.include(shared);
        expect((await login(a, shared)).status).to.equal(200);
      });

      it("logs in a user whose password was stored as scrypt before argon2id, and stores it as argon2id from then on", async function () {
        const username = fresh("legacy");
        const password = secret("legacy");
        const salt = randomBytes(16);
        const key = scryptSync(password, salt, 32, { N: 2 ** 14, r: 8, p: 1 });
        const legacy = ["scrypt", 2 ** 14, 8, 1, salt.toString("base64"), key.toString("base64")].join("$");
        await fixture.store.createUsers([{ username, passwordHash: legacy }]);

        expectError(await login(username, "not-the-password"), 400, "INVALID_CREDENTIALS");
        expect((await fixture.store.findUser(username))!.passwordHash).to.equal(legacy);

        expect((await login(username, password)).status).to.equal(200);
        const upgraded = (await fixture.store.findUser(username))!.passwordHash!;
        expect(upgraded).to.match(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
        expect((await login(username, password)).status).to.equal(200);
        expect((await fixture.store.findUser(username))!.passwordHash).to.equal(upgraded); // not rehashed again
      });

      it("rehashes an argon2id hash made with other params at the next login", async function () {
        const username = fresh("cheap");
        const password = secret("cheap");
        const cheap = await serve({ passwordParams: { memoryCost: 8192, timeCost: 1, parallelism: 1 } });
        expect((await cheap.call("POST", "/v2/user", { body: { username, password } })).status).to.equal(200);
        expect((await fixture.store.findUser(username))!.passwordHash).to.match(/^\$argon2id\$v=19\$m=8192,t=1,p=1\$/);
        expect((await login(username, password)).status).to.equal(200);
        expect((await fixture.store.findUser(username))!.passwordHash).to.match(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      });
    });

    describe("GET /v2/user/logout", function () {
      it("answers ok without a session, as Petstore clients call it", async function () {
        const reply = await api.call("GET", "/v2/user/logout");
        expect(reply.status).to.equal(200);
        expect(reply.json).to.deep.equal(OK);
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

    describe("PUT /v2/user/{username} with the user's session", function () {
      it("sets the fields present and keeps the others (null counts as absent)", async function () {
        const { username, token } = await userWithSession("put", {
          id: 5,
          firstName: "Old",
          lastName: "Name",
          email: "old@example.com",
        });
        const reply = await api.call("PUT", `/v2/user/${username}`, {
          body: { firstName: "New", lastName: null, userStatus: 2 },
          headers: bearer(token),
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
        const { username, password: oldPassword, token } = await userWithSession("pw");
        const newPassword = secret("new");
        const reply = await api.call("PUT", `/v2/user/${username}`, {
          body: { password: newPassword },
          headers: bearer(token),
        });
        expect(reply.status).to.equal(200);
        expectError(await login(username, oldPassword), 400, "INVALID_CREDENTIALS");
        expect((await login(username, newPassword)).status).to.equal(200);
      });

      it("renames a user, keeping the session, and answers 409 USERNAME_TAKEN for a name in use", async function () {
        const { username: name, token } = await userWithSession("mv");
        const [renamed, other] = [fresh("mv-new"), fresh("mv-other")];
        await createUser({ username: other });
        const reply = await api.call("PUT", `/v2/user/${name}`, {
          body: { username: renamed },
          headers: bearer(token),
        });
        expect(reply.status).to.equal(200);
        expectError(await api.call("GET", `/v2/user/${name}`), 404, "USER_NOT_FOUND");
        expect((await api.call("GET", `/v2/user/${renamed}`)).json.username).to.equal(renamed);
        expectError(
          await api.call("PUT", `/v2/user/${renamed}`, { body: { username: other }, headers: bearer(token) }),
          409,
          "USERNAME_TAKEN",
        );
        expect((await fixture.store.findUser(other))!.username).to.equal(other);
      });

      it("answers 400 INVALID_USERNAME and 400 VALIDATION_ERROR, changing nothing", async function () {
        const { username, token } = await userWithSession("put-bad", { userStatus: 1 });
        const put = (path: string, body: unknown) => api.call("PUT", path, { body, headers: bearer(token) });
        expectError(await put("/v2/user/bad%20name", { firstName: "x" }), 400, "INVALID_USERNAME");
        expectError(await put(`/v2/user/${username}`, { userStatus: "high" }), 400, "VALIDATION_ERROR");
        expectError(await put(`/v2/user/${username}`, []), 400, "VALIDATION_ERROR");
        expectError(await put(`/v2/user/${username}`, { username: "no way" }), 400, "VALIDATION_ERROR");
        expect(await fixture.store.findUser(username)).to.include({ userStatus: 1, firstName: null });
      });
    });

    describe("DELETE /v2/user/{username} with the user's session", function () {
      it("deletes the user (message: its username) and its sessions; it no longer exists or logs in", async function () {
        const { username, password, token } = await userWithSession("bye");
        const reply = await api.call("DELETE", `/v2/user/${username}`, { headers: bearer(token) });
        expect(reply.status).to.equal(200);
        expect(reply.json).to.deep.equal({ code: 200, type: "unknown", message: username });
        expectError(await api.call("GET", `/v2/user/${username}`), 404, "USER_NOT_FOUND");
        expect(await fixture.store.findSession(sessionTokenHash(token), new Date())).to.equal(null);
        expectError(await login(username, password), 400, "INVALID_CREDENTIALS");
        // Its session ended with it: a second delete is not even authorised.
        expectError(await api.call("DELETE", `/v2/user/${username}`, { headers: bearer(token) }), 401, "UNAUTHORIZED");
      });

      it("answers 400 INVALID_USERNAME for an invalid username", async function () {
        expectError(await api.call("DELETE", "/v2/user/bad%20name"), 400, "INVALID_USERNAME");
      });
    });

    describe("restart", function () {
      if (!backend.restartable) return;
      it("keeps users and sessions when the PGlite store is closed and reopened on the same directory", async function () {
        const { username, password, token } = await userWithSession("durable");
        await api.close();
        await fixture.reopen();

        api = await serve();
        expect((await login(username, password)).status).to.equal(200);
        expect((await api.call("GET", `/v2/user/${username}`)).json.username).to.equal(username);
        const reply = await api.call("PUT", `/v2/user/${username}`, {
          body: { userStatus: 9 },
          headers: bearer(token),
        });
        expect(reply.status).to.equal(200);
      });
    });

    describe("after every call above", function () {
      it("never puts a password in a response or a log line, nor a session token in a log line", async function () {
        const transcripts = fixture.servers.flatMap((server) => server.transcript);
        const logs = fixture.logs;
        expect(passwords.length).to.be.greaterThan(10);
        expect(transcripts.length).to.be.greaterThan(50);
        expect(logs.length).to.be.greaterThan(50);
        for (const password of passwords) {
          for (const text of [...transcripts, ...logs]) expect(text).to.not.include(password);
        }
        const tokens = transcripts.flatMap((text) => [...text.matchAll(/logged in user session:([A-Za-z0-9_-]{43})/g)]);
        expect(tokens.length).to.be.greaterThan(10);
        for (const [, token] of tokens) for (const line of logs) expect(line).to.not.include(token);
        for (const line of logs) expect(line).to.not.match(/password=|argon2id|scrypt\$/);
      });
    });
  });
}
