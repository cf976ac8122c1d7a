import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { DEFAULT_USER_RATE_LIMITS } from "../../server/users";
import { sessionTokenHash } from "../../server/users/routes/deps";
import {
  BACKENDS,
  OK,
  apiKey,
  bearer,
  expectError,
  fromAddress,
  freshAddress,
  login as loginOn,
  openFixture,
  secretIn,
  sessionOf,
  type UserFixture,
} from "./fixture";
import { startUserServer, type Reply, type UserServer } from "./user-server";

/** Wall-clock milliseconds of `call`, with its result. */
async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const started = performance.now();
  const result = await call();
  return { ms: performance.now() - started, result };
}

for (const backend of BACKENDS) {
  describe(`/v2/user hardening on ${backend.name}`, function () {
    let fixture: UserFixture;
    let api: UserServer;
    const passwords: string[] = [];
    let seq = 0;

    const fresh = (stem: string) => `${stem}-${++seq}`;
    const secret = secretIn(passwords);
    const login = (username: string, password: string, server = api, headers: Record<string, string> = {}) =>
      loginOn(server, username, password, headers);
    const newUser = async (stem: string, fields: Record<string, unknown> = {}) => {
      const username = fresh(stem);
      const password = secret(stem);
      const reply = await api.call("POST", "/v2/user", { body: { username, password, ...fields } });
      expect(reply.status, reply.text).to.equal(200);
      return { username, password };
    };
    const userWithSession = async (stem: string, fields: Record<string, unknown> = {}) => {
      const user = await newUser(stem, fields);
      return { ...user, token: await sessionOf(api, user.username, user.password) };
    };
    const stored = (username: string) => fixture.store.findUser(username);
    const liveSession = async (token: string) =>
      (await fixture.store.findSession(sessionTokenHash(token), new Date())) !== null;
    /** A stored abuse counter (PostgreSQL; on PGlite they are in memory, seen only through behaviour). */
    const expectCounter = async (key: string, atLeast: number, atMost = Infinity) => {
      if (!backend.countersInDatabase) return;
      const { rows } = await fixture.database.query<{ points: number }>(
        "SELECT points FROM rate_limit_counters WHERE key = $1",
        [key],
      );
      expect(rows.length > 0 ? Number(rows[0].points) : 0, key).to.be.within(atLeast, atMost);
    };

    before(async function () {
      fixture = await openFixture(backend);
      api = await fixture.serve();
    });

    after(async function () {
      await fixture?.close();
    });

    describe("PUT and DELETE /v2/user/{username} need a live session of that user", function () {
      it("PUT without credentials answers 401 UNAUTHORIZED, and the user keeps its password and fields", async function () {
        const { username, password } = await newUser("alice", { firstName: "Alice" });
        const before = await stored(username);
        const reply = await api.call("PUT", `/v2/user/${username}`, { body: { password: "x", firstName: "Mallory" } });
        expectError(reply, 401, "UNAUTHORIZED");
        expect(reply.headers.get("www-authenticate")).to.match(/^Bearer /);
        expect(await stored(username)).to.deep.equal(before);
        expectError(await login(username, "x"), 400, "INVALID_CREDENTIALS");
        expect((await login(username, password)).status).to.equal(200);
      });

      it("PUT without credentials answers 401 UNAUTHORIZED even when its body is not JSON (the session is checked first)", async function () {
        const { username } = await newUser("malformed");
        expectError(await api.call("PUT", `/v2/user/${username}`, { rawBody: "{firstName:" }), 401, "UNAUTHORIZED");
      });

      it("PUT with another user's session answers 403 FORBIDDEN by either header, and changes nothing", async function () {
        const victim = await newUser("victim", { email: "victim@example.com" });
        const attacker = await userWithSession("attacker");
        const before = await stored(victim.username);
        for (const headers of [bearer(attacker.token), apiKey(attacker.token)]) {
          const reply = await api.call("PUT", `/v2/user/${victim.username}`, {
            body: { password: "taken-over", email: "attacker@example.com" },
            headers,
          });
          expectError(reply, 403, "FORBIDDEN");
        }
        expect(await stored(victim.username)).to.deep.equal(before);
        expectError(await login(victim.username, "taken-over"), 400, "INVALID_CREDENTIALS");
      });

      it("PUT with an unknown token, a malformed Authorization header or an expired session answers 401", async function () {
        const { username, password } = await newUser("odd-auth", { userStatus: 1 });
        const shortLived = await fixture.serve({ sessionTtlMs: 1 });
        const expired = await sessionOf(shortLived, username, password);
        await sleep(5);
        for (const headers of [
          bearer(randomBytes(32).toString("base64url")),
          apiKey(randomBytes(32).toString("base64url")),
          { Authorization: `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` },
          { Authorization: "Bearer" },
          bearer(expired),
        ]) {
          const reply = await api.call("PUT", `/v2/user/${username}`, { body: { userStatus: 2 }, headers });
          expectError(reply, 401, "UNAUTHORIZED");
        }
        expect(await stored(username)).to.include({ userStatus: 1 });
      });

      it("PUT with the user's own session changes it, by Authorization: Bearer and by api_key", async function () {
        const { username, token } = await userWithSession("owner", { firstName: "Old" });
        const byBearer = await api.call("PUT", `/v2/user/${username}`, {
          body: { firstName: "ByBearer" },
          headers: bearer(token),
        });
        expect(byBearer.status, byBearer.text).to.equal(200);
        expect(await stored(username)).to.include({ firstName: "ByBearer" });
        const byApiKey = await api.call("PUT", `/v2/user/${username}`, {
          body: { firstName: "ByApiKey" },
          headers: apiKey(token),
        });
        expect(byApiKey.status, byApiKey.text).to.equal(200);
        expect(await stored(username)).to.include({ firstName: "ByApiKey" });
      });

      it("DELETE without credentials answers 401 and with another user's session 403; the user remains", async function () {
        const victim = await newUser("keep-me");
        const attacker = await userWithSession("deleter");
        expectError(await api.call("DELETE", `/v2/user/${victim.username}`), 401, "UNAUTHORIZED");
        for (const headers of [bearer(attacker.token), apiKey(attacker.token)]) {
          expectError(await api.call("DELETE", `/v2/user/${victim.username}`, { headers }), 403, "FORBIDDEN");
        }
        expect(await stored(victim.username)).to.include({ username: victim.username });
        expect((await login(victim.username, victim.password)).status).to.equal(200);
      });

      it("DELETE with the user's own session (api_key) deletes it and ends every session it had", async function () {
        const { username, password, token } = await userWithSession("leaving");
        const other = await sessionOf(api, username, password);
        const reply = await api.call("DELETE", `/v2/user/${username}`, { headers: apiKey(token) });
        expect(reply.status, reply.text).to.equal(200);
        expect(reply.json).to.deep.equal({ code: 200, type: "unknown", message: username });
        expect(await stored(username)).to.equal(null);
        expect(await liveSession(token)).to.equal(false);
        expect(await liveSession(other)).to.equal(false);
      });

      it("a password change ends the user's other sessions and keeps the one that made it", async function () {
        const { username, password, token } = await userWithSession("rotate");
        const elsewhere = await sessionOf(api, username, password);
        const reply = await api.call("PUT", `/v2/user/${username}`, {
          body: { password: secret("rotated") },
          headers: bearer(token),
        });
        expect(reply.status, reply.text).to.equal(200);
        expect(await liveSession(token)).to.equal(true);
        expect(await liveSession(elsewhere)).to.equal(false);
        expectError(
          await api.call("PUT", `/v2/user/${username}`, { body: { userStatus: 1 }, headers: bearer(elsewhere) }),
          401,
          "UNAUTHORIZED",
        );
      });
    });

    describe("GET /v2/user/logout", function () {
      for (const [how, header] of [
        ["Authorization: Bearer", bearer],
        ["api_key", apiKey],
      ] as const) {
        it(`ends the session it carries as ${how}: PUT with it then answers 401, another session of the user still works`, async function () {
          const { username, password, token } = await userWithSession("logout");
          const other = await sessionOf(api, username, password);
          const reply = await api.call("GET", "/v2/user/logout", { headers: header(token) });
          expect(reply.status).to.equal(200);
          expect(reply.json).to.deep.equal(OK);
          expect(await liveSession(token)).to.equal(false);
          expectError(
            await api.call("PUT", `/v2/user/${username}`, { body: { userStatus: 5 }, headers: header(token) }),
            401,
            "UNAUTHORIZED",
          );
          expect(await liveSession(other)).to.equal(true);
          const put = await api.call("PUT", `/v2/user/${username}`, {
            body: { userStatus: 6 },
            headers: bearer(other),
          });
          expect(put.status).to.equal(200);
          expect(await stored(username)).to.include({ userStatus: 6 });
        });
      }

      it("answers ok for an unknown token and ends nothing", async function () {
        const { token } = await userWithSession("logout-other");
        const reply = await api.call("GET", "/v2/user/logout", {
          headers: bearer(randomBytes(32).toString("base64url")),
        });
        expect(reply.json).to.deep.equal(OK);
        expect(await liveSession(token)).to.equal(true);
      });
    });

    describe("login failure limits", function () {
      it("locks a username for the attacker's address after 5 failures while its owner logs in from another address", async function () {
        const { username, password } = await newUser("target");
        const limited = await fixture.serve({
          rateLimits: { maxFailuresPerUsernameAndIp: 5, maxFailuresPerIp: 20 }, // API.md's
        });
        const [attacker, owner] = [freshAddress(), freshAddress()];
        for (let i = 0; i < 5; i++) {
          expectError(await login(username, `guess-${i}`, limited, fromAddress(attacker)), 400, "INVALID_CREDENTIALS");
        }
        const locked = await login(username, password, limited, fromAddress(attacker));
        expectError(locked, 429, "RATE_LIMITED");
        expect(Number(locked.headers.get("retry-after"))).to.be.within(1, 15 * 60);
        await expectCounter(`login_failures_user:${attacker}|${username}`, 6);

        const ownLogin = await login(username, password, limited, fromAddress(owner));
        expect(ownLogin.status, ownLogin.text).to.equal(200);
        await expectCounter(`login_failures_user:${owner}|${username}`, 0, 0);
        // The attacker's address may still try other usernames (up to its per-address limit).
        expectError(await login(fresh("other"), "guess", limited, fromAddress(attacker)), 400, "INVALID_CREDENTIALS");
      });

      it("locks an unknown username exactly like a known one (the lock does not reveal who exists)", async function () {
        const limited = await fixture.serve({ rateLimits: { maxFailuresPerUsernameAndIp: 2 } });
        const [ghost, address] = [fresh("ghost"), freshAddress()];
        for (let i = 0; i < 2; i++) {
          expectError(await login(ghost, "wrong", limited, fromAddress(address)), 400, "INVALID_CREDENTIALS");
        }
        expectError(await login(ghost, "wrong", limited, fromAddress(address)), 429, "RATE_LIMITED");
      });

      it("limits failures per address across usernames, and lifts the lock when the window has passed", async function () {
        const { username, password } = await newUser("sprayed");
        const limited = await fixture.serve({ rateLimits: { maxFailuresPerIp: 3, failureWindowMs: 2_000 } });
        const [sprayer, elsewhere] = [freshAddress(), freshAddress()];
        for (let i = 0; i < 3; i++) {
          expectError(await login(fresh("spray"), "wrong", limited, fromAddress(sprayer)), 400, "INVALID_CREDENTIALS");
        }
        const locked = await login(username, password, limited, fromAddress(sprayer));
        expectError(locked, 429, "RATE_LIMITED");
        expect(Number(locked.headers.get("retry-after"))).to.be.within(1, 2);
        expect((await login(username, password, limited, fromAddress(elsewhere))).status).to.equal(200);
        await sleep(2_100);
        expect((await login(username, password, limited, fromAddress(sprayer))).status).to.equal(200);
      });

      it("checks at most 5 of 12 simultaneous guesses from one address; the rest answer 429", async function () {
        const { username } = await newUser("raced");
        const limited = await fixture.serve({ rateLimits: { maxFailuresPerUsernameAndIp: 5 } });
        const address = freshAddress();
        const replies = await Promise.all(
          Array.from({ length: 12 }, (_, i) => login(username, `guess-${i}`, limited, fromAddress(address))),
        );
        const statuses = replies.map((reply) => reply.status);
        expect(statuses.filter((status) => status === 400).length, String(statuses)).to.be.at.most(5);
        expect(statuses.filter((status) => status === 429).length, String(statuses)).to.be.at.least(7);
      });

      it("reads the address from X-Forwarded-For only with TRUST_PROXY: without it, forged addresses change nothing", async function () {
        const { username, password } = await newUser("no-proxy");
        const direct = await fixture.serve({ rateLimits: { maxFailuresPerUsernameAndIp: 2 } }, { trustProxy: false });
        for (const forged of [freshAddress(), freshAddress()]) {
          expectError(await login(username, "wrong", direct, fromAddress(forged)), 400, "INVALID_CREDENTIALS");
        }
        expectError(await login(username, password, direct, fromAddress(freshAddress())), 429, "RATE_LIMITED");
        await expectCounter(`login_failures_user:127.0.0.1|${username}`, 3);
      });

      // A PGlite database belongs to one process: instances that share one exist on PostgreSQL.
      if (backend.countersInDatabase)
        it("shares the counters between instances on one PostgreSQL database: failures on one lock the pair on the other", async function () {
          const { username, password } = await newUser("shared");
          const limits = { rateLimits: { maxFailuresPerUsernameAndIp: 2 } };
          const first = await fixture.serve(limits);
          const second = await fixture.serve({ ...limits, database: await fixture.openAnotherDatabase() });
          const address = freshAddress();
          for (let i = 0; i < 2; i++) {
            expectError(await login(username, "wrong", first, fromAddress(address)), 400, "INVALID_CREDENTIALS");
          }
          expectError(await login(username, password, second, fromAddress(address)), 429, "RATE_LIMITED");
          expect((await login(username, password, second, fromAddress(freshAddress()))).status).to.equal(200);
        });

      it("answers 429 with Retry-After once the login calls per hour are used up", async function () {
        const { username, password } = await newUser("hourly");
        const limited = await fixture.serve({ rateLimits: { callsPerHour: 2 } });
        const address = fromAddress(freshAddress());
        expect((await login(username, password, limited, address)).headers.get("x-rate-limit")).to.equal("1");
        expect((await login(username, password, limited, address)).headers.get("x-rate-limit")).to.equal("0");
        const reply = await login(username, password, limited, address);
        expectError(reply, 429, "RATE_LIMITED");
        expect(Number(reply.headers.get("retry-after"))).to.be.within(1, 3600);
      });
    });

    describe("user creation limit", function () {
      it("allows 60 creation requests a minute per address by default, then answers 429 RATE_LIMITED with Retry-After", async function () {
        const defaults = await startUserServer(fixture.store, { database: fixture.database }, fixture.logs, {
          trustProxy: true,
        });
        fixture.servers.push(defaults);
        expect(DEFAULT_USER_RATE_LIMITS).to.include({ creationsPerWindow: 60, creationWindowMs: 60_000 });
        const address = fromAddress(freshAddress());
        const paths = ["/v2/user/createWithList", "/v2/user/createWithArray"];
        for (let i = 0; i < 60; i++) {
          const reply = await defaults.call("POST", paths[i % 2], { body: [], headers: address });
          expect(reply.status, `request ${i + 1}: ${reply.text}`).to.equal(200);
        }
        const username = fresh("sixty-first");
        const refused = await defaults.call("POST", "/v2/user", { body: { username }, headers: address });
        expectError(refused, 429, "RATE_LIMITED");
        expect(Number(refused.headers.get("retry-after"))).to.be.within(1, 60);
        expect(await stored(username)).to.equal(null);
      });

      it("counts POST /v2/user, createWithList and createWithArray together, per address, storing nothing past the limit", async function () {
        const limited = await fixture.serve({ rateLimits: { creationsPerWindow: 3 } });
        const [address, other] = [fromAddress(freshAddress()), fromAddress(freshAddress())];
        const names = Array.from({ length: 6 }, () => fresh("made"));
        const create = (path: string, body: unknown, headers = address) =>
          limited.call("POST", path, { body, headers });
        expect((await create("/v2/user", { username: names[0] })).status).to.equal(200);
        expect(
          (await create("/v2/user/createWithList", [{ username: names[1] }, { username: names[2] }])).status,
        ).to.equal(200);
        expect((await create("/v2/user/createWithArray", [{ username: names[3] }])).status).to.equal(200);
        expectError(await create("/v2/user", { username: names[4] }), 429, "RATE_LIMITED");
        expectError(await create("/v2/user/createWithList", [{ username: names[4] }]), 429, "RATE_LIMITED");
        expect(await stored(names[4])).to.equal(null);
        expect((await create("/v2/user", { username: names[5] }, other)).status).to.equal(200);
        expect(await fixture.store.firstTakenUsername([names[0], names[1], names[2], names[3], names[5]])).to.not.equal(
          null,
        );
      });
    });

    describe("batches and hashing", function () {
      /** Logs in `count` times in a row beside whatever else runs, answering each time in ms. */
      const loginTimes = async (username: string, password: string, count: number) => {
        const times: number[] = [];
        for (let i = 0; i < count; i++) {
          const { ms, result } = await timed(() => login(username, password));
          expect(result.status, result.text).to.equal(200);
          times.push(Math.round(ms));
        }
        return times;
      };

      it("refuses four simultaneous batches of 1,000 copies of one username with 409 before hashing, a login beside them answering in under 1 s", async function () {
        const { username, password } = await newUser("bystander");
        const copied = fresh("copied");
        const flood = Array.from({ length: 1000 }, () => ({ username: copied, password: "p", email: "c@example.com" }));
        const batches = Array.from({ length: 4 }, () =>
          timed(() => api.call("POST", "/v2/user/createWithList", { body: flood })),
        );
        const times = await loginTimes(username, password, 3);
        const answers = await Promise.all(batches);
        for (const { ms, result } of answers) {
          expectError(result, 409, "USERNAME_TAKEN");
          expect(result.json.error.message).to.include(copied);
          // 1,000 argon2id hashes take tens of seconds here: an answer within 2 s hashed none.
          expect(ms).to.be.below(2_000);
        }
        expect(Math.max(...times), `logins took ${times} ms`).to.be.below(1_000);
        expect(await stored(copied)).to.equal(null);
      });

      it("refuses a batch whose last username exists with 409 before hashing any password, storing none", async function () {
        const existing = (await newUser("exists-last")).username;
        const names = Array.from({ length: 999 }, () => fresh("batch-new"));
        const body = [...names, existing].map((username) => ({ username, password: "pw-batch" }));
        const { ms, result } = await timed(() => api.call("POST", "/v2/user/createWithList", { body }));
        expectError(result, 409, "USERNAME_TAKEN");
        expect(result.json.error.message).to.include(existing);
        expect(ms).to.be.below(2_000);
        expect(await fixture.store.firstTakenUsername(names)).to.equal(null);
      });

      it("keeps logins under 1 s while four 1,000-user batches are hashed; a batch whose client hangs up stops and stores nothing", async function () {
        const { username, password } = await newUser("busy-login");
        const logs: string[] = [];
        const server = await fixture.serve({}, { logs });
        const clients = Array.from({ length: 4 }, () => new AbortController());
        const batchNames = clients.map(() => Array.from({ length: 1000 }, () => fresh("flood")));
        const batches = clients.map((client, b) =>
          server
            .call("POST", "/v2/user/createWithList", {
              body: batchNames[b].map((name, i) => ({
                username: name,
                password: `pw-${b}-${i}`,
                email: `${name}@x.io`,
              })),
              signal: client.signal,
            })
            .catch((err: Error) => err),
        );
        await sleep(500); // the batches are validated and hashing
        const times = await loginTimes(username, password, 6);
        expect(Math.max(...times), `logins took ${times} ms`).to.be.below(1_000);

        for (const client of clients) client.abort();
        for (const outcome of await Promise.all(batches)) expect(outcome).to.be.instanceOf(Error); // no answer came
        // Each batch stops at its next hash: the server records 499 (client closed request) for all four.
        const deadline = Date.now() + 10_000;
        const closed = () => logs.filter((line) => /"path":"\/v2\/user\/createWithList","status":499/.test(line));
        while (closed().length < 4 && Date.now() < deadline) await sleep(50);
        expect(closed()).to.have.length(4);
        expect(await fixture.store.firstTakenUsername(batchNames.flat())).to.equal(null);
        expect((await login(username, password)).status).to.equal(200);
      });
    });

    describe("hostile input", function () {
      const textFields = ["firstName", "lastName", "email", "phone", "password"];

      it("answers 400 VALIDATION_ERROR naming the field for a NUL in any text field, stores nothing, and logs no email, password or hash", async function () {
        const logs: string[] = [];
        const server = await fixture.serve({}, { logs });
        const secrets: string[] = [];
        for (const field of textFields) {
          const username = fresh(`nul-${field}`);
          const email = `${username}@mail.example`;
          const password = secret(`nul-${field}`);
          secrets.push(email, password);
          const user: Record<string, string> = { username, email, password, firstName: "Ann", phone: "555" };
          user[field] = `${user[field]}\u0000tail`;
          const single = await server.call("POST", "/v2/user", { body: user });
          expectError(single, 400, "VALIDATION_ERROR");
          expect(single.json.error.details.map((d: { path: string }) => d.path)).to.deep.equal([field]);
          const batch = await server.call("POST", "/v2/user/createWithList", {
            body: [
              { username: fresh("nul-ok"), email, password },
              { ...user, username: fresh("nul-batch") },
            ],
          });
          expectError(batch, 400, "VALIDATION_ERROR");
          expect(batch.json.error.details.map((d: { path: string }) => d.path)).to.deep.equal([`1.${field}`]);
          expect(await stored(username)).to.equal(null);
        }
        const { username, token } = await userWithSession("nul-put", { lastName: "Kept" });
        const put = await server.call("PUT", `/v2/user/${username}`, {
          body: { lastName: "x\u0000y" },
          headers: bearer(token),
        });
        expectError(put, 400, "VALIDATION_ERROR");
        expect(await stored(username)).to.include({ lastName: "Kept" });

        expect(logs.length).to.be.greaterThan(textFields.length * 2);
        for (const line of logs) {
          expect(JSON.parse(line).status, line).to.be.oneOf([200, 400]);
          for (const text of secrets) expect(line).to.not.include(text);
          expect(line).to.not.match(/argon2|scrypt|unhandled error/);
        }
      });

      it("answers 400 VALIDATION_ERROR for an unpaired UTF-16 surrogate, which PostgreSQL would silently replace", async function () {
        const username = fresh("surrogate");
        const reply = await api.call("POST", "/v2/user", {
          rawBody: `{"username":"${username}","lastName":"a\\ud800b"}`,
        });
        expectError(reply, 400, "VALIDATION_ERROR");
        expect(reply.json.error.details.map((d: { path: string }) => d.path)).to.deep.equal(["lastName"]);
        expect(await stored(username)).to.equal(null);
        const emoji = fresh("emoji");
        expect((await api.call("POST", "/v2/user", { body: { username: emoji, lastName: "a😀b" } })).status).to.equal(
          200,
        );
        expect(await stored(emoji)).to.include({ lastName: "a😀b" });
      });

      it("answers 400 for a NUL in login's username or password, or in the path", async function () {
        const { username, password } = await newUser("nul-login");
        expectError(await login(`${username}\u0000`, password), 400, "INVALID_CREDENTIALS");
        expectError(await login(username, `${password}\u0000`), 400, "INVALID_CREDENTIALS");
        expectError(await api.call("GET", `/v2/user/${username}%00`), 400, "INVALID_USERNAME");
        expect((await login(username, password)).status).to.equal(200);
      });

      it("answers 500 INTERNAL_ERROR when the database refuses a batch, logging the SQLSTATE but no email, password or hash", async function () {
        // A check the schema does not know about: PostgreSQL's refusal quotes the whole failing row in its detail.
        await fixture.database.exec(
          "ALTER TABLE users ADD CONSTRAINT tripwire CHECK (first_name IS DISTINCT FROM 'tripwire')",
        );
        try {
          const logs: string[] = [];
          const server = await fixture.serve({}, { logs });
          const users = [fresh("db-a"), fresh("db-b")].map((username, i) => ({
            username,
            email: `${username}@leak.example`,
            password: secret(username),
            firstName: i === 1 ? "tripwire" : "fine",
          }));
          const reply: Reply = await server.call("POST", "/v2/user/createWithList", { body: users });
          expectError(reply, 500, "INTERNAL_ERROR");
          expect(reply.text).to.not.match(/tripwire|leak\.example/);
          expect(await fixture.store.firstTakenUsername(users.map((u) => u.username))).to.equal(null);

          const logged = logs.map((line) => JSON.parse(line));
          const error = logged.find((entry) => entry.msg === "unhandled error");
          expect(error, logs.join("\n")).to.not.equal(undefined);
          expect(error.err).to.include({ type: "SqlError", code: "23514", constraint: "tripwire" });
          for (const line of logs) {
            for (const user of users) {
              expect(line).to.not.include(user.email);
              expect(line).to.not.include(user.password);
            }
            expect(line).to.not.match(/argon2|Failing row|"params"|"parameters"|"query"/);
          }
        } finally {
          await fixture.database.exec("ALTER TABLE users DROP CONSTRAINT tripwire");
        }
      });
    });

    describe("after every call above", function () {
      it("never puts a password in a response or a log line", async function () {
        const transcripts = fixture.servers.flatMap((server) => server.transcript);
        expect(passwords.length).to.be.greaterThan(20);
        for (const password of passwords) {
          for (const text of [...transcripts, ...fixture.logs]) expect(text).to.not.include(password);
        }
      });
    });
  });
}
