import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import pino from "pino";
import { SqlError } from "../../server/db";
import { openUserStore, UsernameTakenError, type UserStore } from "../../server/users";
import { startPostgresServer, type PostgresServer } from "./postgres-server";

/** Where a store suite gets its database: the same tests run on each backend. */
interface Backend {
  name: string;
  /** Opens the suite's store; called again to reopen the same database. */
  setUp(): Promise<{ open: () => Promise<UserStore>; tearDown: () => Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: "PGlite",
    async setUp() {
      const dataDir = await mkdtemp(join(tmpdir(), "users-pglite-"));
      return { open: () => openUserStore({ dataDir }), tearDown: () => rm(dataDir, { recursive: true, force: true }) };
    },
  },
  {
    name: "PostgreSQL server",
    async setUp() {
      const server: PostgresServer = await startPostgresServer();
      try {
        const databaseUrl = await server.createDatabase();
        return { open: () => openUserStore({ databaseUrl, dataDir: "unused" }), tearDown: () => server.stop() };
      } catch (err) {
        await server.stop();
        throw err;
      }
    },
  },
];

let seq = 0;
/** A username no other test uses, so tests share one database without cleaning it. */
const fresh = (stem: string) => `${stem}-${++seq}`;

for (const backend of backends) {
  describe(`user store on ${backend.name}`, function () {
    let store: UserStore;
    let env: Awaited<ReturnType<Backend["setUp"]>>;

    before(async function () {
      env = await backend.setUp();
      store = await env.open();
    });

    after(async function () {
      await store?.close();
      await env?.tearDown();
    });

    it("applies the migrations at open and is a no-op when reopened", async function () {
      const name = fresh("keep");
      await store.createUsers([{ username: name }]);
      await store.close();
      store = await env.open();
      expect(await store.findUser(name)).to.include({ username: name });
    });

    it("stores every field and answers it back, assigning an id when none is given", async function () {
      const [alice, bob] = [fresh("alice"), fresh("bob")];
      const created = await store.createUsers([
        {
          id: 2n ** 63n - 1n,
          username: alice,
          firstName: "Alice",
          lastName: "Liddell",
          email: "alice@example.com",
          phone: "555",
          userStatus: -(2 ** 31),
          passwordHash: "scrypt$hash",
        },
        { username: bob },
      ]);
      expect(created.map((user) => user.username).sort()).to.deep.equal([alice, bob].sort());
      expect(await store.findUser(alice)).to.deep.equal({
        id: 2n ** 63n - 1n,
        username: alice,
        firstName: "Alice",
        lastName: "Liddell",
        email: "alice@example.com",
        phone: "555",
        userStatus: -(2 ** 31),
        passwordHash: "scrypt$hash",
      });
      const stored = await store.findUser(bob);
      expect(stored?.id).to.be.a("bigint").and.to.be.greaterThan(0n);
      expect(stored).to.include({ firstName: null, userStatus: null, passwordHash: null });
    });

    it("answers null for an unknown user", async function () {
      expect(await store.findUser(fresh("nobody"))).to.equal(null);
    });

    it("stores none of a batch when one username already exists", async function () {
      const taken = fresh("taken");
      await store.createUsers([{ username: taken }]);
      const [first, last] = [fresh("first"), fresh("last")];
      const error = await store
        .createUsers([{ username: first }, { username: taken }, { username: last }])
        .catch((e) => e);
      expect(error).to.be.instanceOf(UsernameTakenError);
      expect(error.username).to.equal(taken);
      expect(await store.findUser(first)).to.equal(null);
      expect(await store.findUser(last)).to.equal(null);
    });

    it("stores none of a batch in which a username repeats", async function () {
      const [a, twice] = [fresh("a"), fresh("twice")];
      const error = await store
        .createUsers([{ username: a }, { username: twice }, { username: twice }])
        .catch((e) => e);
      expect(error).to.be.instanceOf(UsernameTakenError);
      expect(await store.findUser(a)).to.equal(null);
    });

    it("lets exactly one of 20 concurrent creations of one username succeed", async function () {
      const name = fresh("race");
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => store.createUsers([{ username: name, firstName: `n${i}` }])),
      );
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      expect(results.filter((r) => r.status === "fulfilled")).to.have.length(1);
      expect(rejected).to.have.length(19);
      for (const r of rejected) expect(r.reason).to.be.instanceOf(UsernameTakenError);
    });

    it("updates only the given fields, renames, and refuses a rename onto a taken name", async function () {
      const [name, renamed, other] = [fresh("upd"), fresh("renamed"), fresh("other")];
      await store.createUsers([{ username: name, firstName: "Old", email: "e@x" }, { username: other }]);
      const updated = await store.updateUser(name, { firstName: "New", userStatus: 3 });
      expect(updated).to.include({ firstName: "New", email: "e@x", userStatus: 3 });

      expect(await store.updateUser(name, { username: renamed })).to.include({ username: renamed, firstName: "New" });
      expect(await store.findUser(name)).to.equal(null);

      const error = await store.updateUser(renamed, { username: other }).catch((e) => e);
      expect(error).to.be.instanceOf(UsernameTakenError);
      expect(await store.updateUser(fresh("ghost"), { firstName: "x" })).to.equal(null);
      expect(await store.updateUser(renamed, {})).to.include({ username: renamed });
    });

    it("deletes a user once, with its sessions", async function () {
      const name = fresh("del");
      await store.createUsers([{ username: name }]);
      expect(await store.createSession(`tok-${name}`, name, new Date(Date.now() + 60_000))).to.equal(true);
      expect(await store.deleteUser(name)).to.equal(true);
      expect(await store.deleteUser(name)).to.equal(false);
      expect(await store.findSession(`tok-${name}`, new Date())).to.equal(null);
    });

    it("keeps sessions until they expire or are deleted, and across a rename", async function () {
      const [name, renamed] = [fresh("sess"), fresh("sess-renamed")];
      const now = new Date();
      await store.createUsers([{ username: name }]);
      expect(await store.createSession(`live-${name}`, name, new Date(now.getTime() + 60_000))).to.equal(true);
      expect(await store.createSession(`old-${name}`, name, new Date(now.getTime() - 1))).to.equal(true);
      expect(await store.createSession(`tok-${fresh("none")}`, fresh("ghost"), now)).to.equal(false);

      await store.updateUser(name, { username: renamed });
      const session = await store.findSession(`live-${name}`, now);
      expect(session?.username).to.equal(renamed);
      expect(session?.expiresAt.getTime()).to.equal(now.getTime() + 60_000);
      expect(await store.findSession(`old-${name}`, now)).to.equal(null);

      expect(await store.deleteExpiredSessions(now)).to.be.greaterThanOrEqual(1);
      expect(await store.deleteSession(`old-${name}`)).to.equal(false);
      expect(await store.deleteSession(`live-${name}`)).to.equal(true);
      expect(await store.findSession(`live-${name}`, now)).to.equal(null);
    });

    it("answers the first of several usernames that exists, or null", async function () {
      const [taken, free] = [fresh("first-taken"), fresh("free")];
      await store.createUsers([{ username: taken }]);
      expect(await store.firstTakenUsername([free, taken])).to.equal(taken);
      expect(await store.firstTakenUsername([free])).to.equal(null);
      expect(await store.firstTakenUsername([])).to.equal(null);
    });

    it("ends every session of a user but the one kept, and no other user's", async function () {
      const [name, other] = [fresh("sessions"), fresh("bystander")];
      const later = new Date(Date.now() + 60_000);
      await store.createUsers([{ username: name }, { username: other }]);
      for (const token of [`keep-${name}`, `a-${name}`, `b-${name}`]) await store.createSession(token, name, later);
      await store.createSession(`own-${other}`, other, later);
      expect(await store.deleteOtherSessions(name, `keep-${name}`)).to.equal(2);
      expect(await store.findSession(`keep-${name}`, new Date())).to.not.equal(null);
      expect(await store.findSession(`a-${name}`, new Date())).to.equal(null);
      expect(await store.findSession(`own-${other}`, new Date())).to.not.equal(null);
    });

    for (const [what, user, code] of [
      ["a NUL character", { email: "nul\u0000@mail.example" }, "22021"],
      ["a value beyond its column type", { userStatus: 2 ** 40 }, "22003"],
    ] as const) {
      it(`refuses ${what} with a SqlError that carries none of the statement's values, even through a logger`, async function () {
        const username = fresh("refused");
        const passwordHash = `$argon2id$v=19$m=19456,t=2,p=1$${randomSuffix()}`;
        const error = await store.createUsers([{ username, passwordHash, ...user }]).catch((e) => e);
        expect(error).to.be.instanceOf(SqlError);
        expect(error.code).to.equal(code);
        const logged: string[] = [];
        pino({}, { write: (line: string) => void logged.push(line) }).error({ err: error }, "unhandled error");
        for (const text of [JSON.stringify(error), error.message, logged.join("")]) {
          expect(text).to.not.include(passwordHash);
          expect(text).to.not.include(username);
          expect(text).to.not.match(/mail\.example|"params"|"parameters"|"query"|"detail"/);
        }
        expect(logged.join("")).to.include(`"code":"${code}"`);
        expect(await store.findUser(username)).to.equal(null);
      });
    }
  });
}

function randomSuffix(): string {
  return Math.random().toString(36).slice(2);
}
