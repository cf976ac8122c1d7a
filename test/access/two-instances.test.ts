/**
 * Access keys across instances (API.md, "Access keys"): two service processes on one PostgreSQL
 * database and the shared `hardhat node`. Instance `open` runs in open mode, instance `strict` with
 * REQUIRE_ACCESS_KEY=true; a key made on one works on the other, and a revocation on one is refused
 * by the other within 1 s (measured). Also: what REQUIRE_ACCESS_KEY closes and leaves open,
 * metrics:read, the access key each operation records in the store, and a pg_dump secret scan.
 */
import { expect } from "chai";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { Client } from "pg";
import type { JsonRpcProvider, Wallet } from "ethers";
import { deployDirectly, fundedWallet, ServiceProcess, sleep, TEST_API_KEY, type ApiResponse } from "../api/harness";
import { sharedService } from "../api/shared-service";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";
import {
  ALL_SCOPES,
  AccessClient,
  bearer,
  expectForbidden,
  expectNoAccessSecrets,
  expectUnauthorized,
  ROOT,
  storedForms,
  type MadeKey,
} from "./fixture";

const run = promisify(execFile);

/** pg_dump from the newest /usr/lib/postgresql/<version>/bin (where postgres-server.ts finds initdb), else PATH. */
function pgDumpBinary(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => path.join(root, v, "bin", "pg_dump")).find((p) => existsSync(p));
  return found ?? "pg_dump";
}

describe("Access keys on two instances of one PostgreSQL database", function () {
  let provider: JsonRpcProvider;
  let postgres: PostgresServer;
  let databaseUrl: string;
  let db: Client;
  /** Open mode. */
  let open: ServiceProcess;
  /** REQUIRE_ACCESS_KEY=true. */
  let strict: ServiceProcess;
  let onOpen: AccessClient;
  let onStrict: AccessClient;
  let owner: Wallet;
  let collection: string;

  before(async function () {
    this.timeout(180_000);
    const shared = await sharedService();
    provider = shared.provider;
    postgres = await startPostgresServer();
    databaseUrl = await postgres.createDatabase();
    const env = { DATABASE_URL: databaseUrl, TX_TIMEOUT_MS: "30000" };
    const starting = Promise.all([
      ServiceProcess.start({ rpcUrl: shared.node.rpcUrl, env }),
      ServiceProcess.start({ rpcUrl: shared.node.rpcUrl, env: { ...env, REQUIRE_ACCESS_KEY: "true" } }),
    ]);
    owner = await fundedWallet(provider);
    collection = await deployDirectly(owner.connect(provider));
    [open, strict] = await starting;
    onOpen = new AccessClient(open.url);
    onStrict = new AccessClient(strict.url);
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
    const minted = await onOpen.post("/nft/mintForFree", body({ mintAmount: 1 }));
    expect(minted.status, minted.text).to.equal(200);
  });

  after(async function () {
    this.timeout(60_000);
    await db?.end();
    await Promise.all([open?.stop(), strict?.stop()]);
    await postgres?.stop();
  });

  const as = (key: MadeKey) => bearer(key.key);
  const body = (extra: Record<string, unknown> = {}) => ({
    privateKey: owner.privateKey,
    contractAddress: collection,
    ...extra,
  });

  describe("revocation reaches the other instance within 1 s", function () {
    it("a key made on one instance works on the other, and the first lists when it was used", async function () {
      const key = await onOpen.makeKey({ scopes: ["nft:read"] });
      const res = await onStrict.post("/nft/total-supply", body(), as(key));
      expect(res.status, res.text).to.equal(200);
      let lastUsedAt: string | null = null;
      for (let i = 0; i < 40 && !lastUsedAt; i++) {
        if (i > 0) await sleep(50);
        const listed = (await onOpen.getAs("/access-keys", ROOT)).body.accessKeys as {
          id: string;
          lastUsedAt: string;
        }[];
        lastUsedAt = listed.find((k) => k.id === key.id)!.lastUsedAt;
      }
      expect(Date.parse(lastUsedAt!)).to.be.closeTo(Date.now(), 10_000);
    });

    it("DELETE on one instance, then the other refuses the key in under 1 s (polled every 10 ms; 3 tries)", async function () {
      const probe = (key: MadeKey) => onStrict.getAs(`/nft/operations/${randomUUID()}`, as(key));
      const delays: { fromRequest: number; fromAnswer: number }[] = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        const key = await onOpen.makeKey({ name: `revoked ${attempt}`, scopes: ["nft:read"] });
        // The second instance has just looked the key up (and caches what it found): the worst case.
        const known = await probe(key);
        expect(known.status, known.text).to.equal(404);
        expect(known.body.error.code).to.equal("OPERATION_NOT_FOUND");
        const sent = performance.now();
        const revoked = await onOpen.delete(`/access-keys/${key.id}`, ROOT);
        const answered = performance.now();
        expect(revoked.status, revoked.text).to.equal(204);
        let res: ApiResponse;
        for (;;) {
          res = await probe(key);
          if (res.status !== 404 || performance.now() - answered > 3_000) break;
          await sleep(10);
        }
        const refusedAt = performance.now();
        expectUnauthorized(res);
        delays.push({ fromRequest: refusedAt - sent, fromAnswer: refusedAt - answered });
      }
      console.log(
        `      (refused by the other instance after ${delays.map((d) => `${d.fromAnswer.toFixed(0)} ms`).join(", ")} from the 204; ` +
          `${delays.map((d) => `${d.fromRequest.toFixed(0)} ms`).join(", ")} from sending the DELETE)`,
      );
      for (const d of delays) expect(d.fromRequest).to.be.below(1_000);
    });

    it("revoking a key on one instance: the keys it made, and theirs, are refused on the other in under 1 s (issue 35)", async function () {
      const manage = ["access-keys:manage", "nft:read"];
      const parent = await onOpen.makeKey({ name: "parent", scopes: manage });
      const child = await onStrict.makeKey({ name: "child", scopes: manage }, as(parent));
      const grandchild = await onOpen.makeKey({ name: "grandchild", scopes: ["nft:read"] }, as(child));
      expect([child.body.createdBy, grandchild.body.createdBy]).to.deep.equal([parent.id, child.id]);
      const probe = (key: MadeKey) => onStrict.getAs(`/nft/operations/${randomUUID()}`, as(key));
      // The second instance has just looked both up (and caches what it found): the worst case.
      for (const key of [child, grandchild]) expect((await probe(key)).status).to.equal(404);
      const sent = performance.now();
      expect((await onOpen.delete(`/access-keys/${parent.id}`, ROOT)).status).to.equal(204);
      let answers: ApiResponse[];
      for (;;) {
        answers = await Promise.all([probe(child), probe(grandchild)]);
        if (answers.every((res) => res.status === 401) || performance.now() - sent > 3_000) break;
        await sleep(10);
      }
      const refusedAfter = performance.now() - sent;
      for (const res of answers) expectUnauthorized(res);
      console.log(`      (both refused by the other instance ${refusedAfter.toFixed(0)} ms after sending the DELETE)`);
      expect(refusedAfter).to.be.below(1_000);
    });
  });

  describe("REQUIRE_ACCESS_KEY=true", function () {
    let reader: MadeKey;

    before(async function () {
      reader = await onOpen.makeKey({ scopes: ["nft:read", "nft:configure"] });
    });

    it("every /nft route and GET /nft/operations/{id} need a key (401 before the body is read), /metrics too", async function () {
      const unknownOperation = `/nft/operations/${randomUUID()}`;
      const routes: [string, Record<string, unknown>][] = [
        ["/nft/tokenURI", body({ tokenId: 1 })],
        ["/nft/total-supply", body()],
        ["/nft/mint", body({ mintAmount: 1 })],
        ["/nft/mintForFree", body({ mintAmount: 1 })],
        ["/nft/addUserAddressToWhitelist", body({ address: owner.address })],
        ["/nft/setPaused", body({ state: true })],
        ["/nft/setCost", body({ cost: "1" })],
        ["/nft/deploy", { privateKey: owner.privateKey }],
      ];
      for (const [route, json] of routes) {
        expectUnauthorized(await onStrict.post(route, json));
        expectUnauthorized(await onStrict.request("POST", route, { raw: "{not json" }));
        // The open instance on the same database still serves them without a key.
        if (route === "/nft/tokenURI" || route === "/nft/total-supply") {
          expect((await onOpen.post(route, json)).status).to.equal(200);
        }
      }
      expectUnauthorized(await onStrict.post("/nft/withdraw", body()), "INVALID_API_KEY");
      expectUnauthorized(await onStrict.get(unknownOperation));
      expectUnauthorized(await onStrict.get("/metrics"));
      expect((await onOpen.get(unknownOperation)).status).to.equal(404);
    });

    it("with a key they answer as in open mode", async function () {
      const res = await onStrict.post("/nft/total-supply", body(), as(reader));
      expect(res.status, res.text).to.equal(200);
      const unchanged = await onStrict.post("/nft/setPaused", body({ state: false }), as(reader));
      expect(unchanged.status, unchanged.text).to.equal(200);
      expect(unchanged.body.changed).to.equal(false);
      expect((await onStrict.getAs(`/nft/operations/${unchanged.body.operationId}`, as(reader))).status).to.equal(200);
    });

    it("/health, /health/live, /health/ready, /openapi.json, /docs and /v2/user stay open", async function () {
      for (const route of [
        "/health",
        "/health/live",
        "/health/ready",
        "/openapi.json",
        "/docs",
        "/docs/swagger-ui.css",
      ]) {
        const res = await onStrict.get(route);
        expect(res.status, `${route}: ${res.text.slice(0, 200)}`).to.equal(200);
      }
      const username = `u${randomUUID().slice(0, 8)}`;
      const created = await onStrict.post("/v2/user", {
        username,
        password: "secret-pass-1",
        email: `${username}@x.io`,
      });
      expect(created.status, created.text).to.equal(200);
      const got = await onStrict.get(`/v2/user/${username}`);
      expect(got.status, got.text).to.equal(200);
      expect(got.body.username).to.equal(username);
    });

    it("metrics:read: GET /metrics with a key holding it is 200, without it 403 naming it", async function () {
      const metrics = await onOpen.makeKey({ scopes: ["metrics:read"] });
      const others = await onOpen.makeKey({ scopes: ALL_SCOPES.filter((s) => s !== "metrics:read") });
      const res = await onStrict.getAs("/metrics", as(metrics));
      expect(res.status).to.equal(200);
      expect(res.text).to.include("# TYPE");
      expectForbidden(await onStrict.getAs("/metrics", as(others)), "the scope metrics:read");
      expect((await onOpen.get("/metrics")).status).to.equal(200);
    });
  });

  describe("operations record the access key that made them (operations.access_key_id)", function () {
    const recorded = async (operationId: string) => {
      const { rows } = await db.query<{ access_key_id: string | null }>(
        "SELECT access_key_id FROM operations WHERE id = $1",
        [operationId],
      );
      expect(rows, `operation ${operationId} in the store`).to.have.length(1);
      return rows[0].access_key_id;
    };

    it("a made key's id, 'root' for the API_KEY, null for a request key in open mode; on either instance", async function () {
      const key = await onStrict.makeKey({ scopes: ["nft:mintForFree"] });
      const byKey = await onOpen.post("/nft/mintForFree", body({ mintAmount: 1 }), as(key));
      const byKeyOnStrict = await onStrict.post("/nft/mintForFree", body({ mintAmount: 1 }), as(key));
      const byRoot = await onOpen.post("/nft/mintForFree", body({ mintAmount: 1 }), { "X-API-Key": TEST_API_KEY });
      const byNobody = await onOpen.post("/nft/mintForFree", body({ mintAmount: 1 }));
      for (const res of [byKey, byKeyOnStrict, byRoot, byNobody]) expect(res.status, res.text).to.equal(200);
      expect(await recorded(byKey.body.operationId)).to.equal(key.id);
      expect(await recorded(byKeyOnStrict.body.operationId)).to.equal(key.id);
      expect(await recorded(byRoot.body.operationId)).to.equal("root");
      expect(await recorded(byNobody.body.operationId)).to.equal(null);
    });

    it("an operation that answered 'unchanged' (no transaction) records its key too", async function () {
      const key = await onOpen.makeKey({ scopes: ["nft:configure"] });
      const res = await onOpen.post("/nft/setPaused", body({ state: false }), as(key));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.changed).to.equal(false);
      expect(await recorded(res.body.operationId)).to.equal(key.id);
    });
  });

  describe("secrets", function () {
    it("no response of either instance and no line either printed holds an access-key secret or the API_KEY", function () {
      expectNoAccessSecrets([onOpen, onStrict], [open.output(), strict.output()]);
    });

    it("a pg_dump of the database holds only hashes: no secret nor API_KEY", async function () {
      this.timeout(60_000);
      const { stdout } = await run(pgDumpBinary(), ["--no-owner", "--data-only", "-d", databaseUrl], {
        maxBuffer: 256 * 1024 * 1024,
        encoding: "buffer",
      });
      const dump = stdout as Buffer;
      expect(dump.toString("utf8")).to.include("COPY public.access_keys");
      const secrets = [TEST_API_KEY, ...onOpen.secrets, ...onStrict.secrets];
      const found = storedForms(dump, secrets);
      expect(found.secrets, "secrets in the dump").to.deep.equal([]);
      expect(found.hashes, "every key's hash is in the dump").to.equal(secrets.length - 1);
    });
  });
});
