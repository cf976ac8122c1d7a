/**
 * Access keys end to end (API.md, "Access keys"), on one service process with PGlite in open mode
 * (REQUIRE_ACCESS_KEY unset) and TRUST_PROXY=true, against the shared `hardhat node`: every scope
 * allowed and refused, collection limits, operations per key, expiry and revocation, granting,
 * withdraw, `from`, audit events, 429 after repeated failures, and a secret scan of every response,
 * the service's log and the PGlite data dir.
 */
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import path from "node:path";
import { getAddress, Wallet, type JsonRpcProvider } from "ethers";
import { DEFAULT_COLLECTION } from "../../server/chain/collection";
import { expectNoGasSpent, UUID } from "../api/expectations";
import {
  collectionAt,
  deployDirectly,
  fundedWallet,
  ServiceProcess,
  sleep,
  TEST_API_KEY,
  type ApiResponse,
  type JsonBody,
} from "../api/harness";
import { sharedService } from "../api/shared-service";
import {
  ALL_SCOPES,
  AccessClient,
  apiKeyHeader,
  bearer,
  expectForbidden,
  expectNoAccessSecrets,
  expectUnauthorized,
  readTree,
  ROOT,
  storedForms,
  xApiKey,
  type MadeKey,
  type ScopeName,
} from "./fixture";
import { seededDataDir } from "../support/pglite-template";

describe("Access keys (PGlite, open mode)", function () {
  let provider: JsonRpcProvider;
  let service: ServiceProcess;
  let dataDir: string;
  let api: AccessClient;
  /** Owns both collections. */
  let owner: Wallet;
  /** Pays for mints. */
  let minter: Wallet;
  let collectionA: string;
  let collectionB: string;
  /** An operation (mintForFree on A) made without any access key. */
  let openOperationId: string;

  before(async function () {
    this.timeout(180_000);
    const shared = await sharedService();
    provider = shared.provider;
    dataDir = await seededDataDir("access-test-");
    const started = ServiceProcess.start({
      rpcUrl: shared.node.rpcUrl,
      env: { TRUST_PROXY: "true", DATA_DIR: dataDir, TX_TIMEOUT_MS: "30000", MAX_COLLECTIONS_PER_KEY: "2" },
    });
    [owner, minter] = await Promise.all([fundedWallet(provider), fundedWallet(provider)]);
    collectionA = await deployDirectly(owner.connect(provider));
    collectionB = await deployDirectly(owner.connect(provider));
    service = await started;
    api = new AccessClient(service.url);
    // Token 1 on each collection, minted without an access key: open mode as the seed has it.
    for (const contractAddress of [collectionA, collectionB]) {
      const res = await api.post("/nft/mintForFree", { privateKey: owner.privateKey, contractAddress, mintAmount: 1 });
      expect(res.status, res.text).to.equal(200);
      if (contractAddress === collectionA) openOperationId = res.body.operationId;
    }
  });

  after(async function () {
    this.timeout(30_000);
    await service?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const as = (key: MadeKey | string) => bearer(typeof key === "string" ? key : key.key);
  const tokenUri = (headers: Record<string, string>, contractAddress = collectionA) =>
    api.post("/nft/tokenURI", { privateKey: minter.privateKey, contractAddress, tokenId: 1 }, headers);

  describe("making, showing and listing keys", function () {
    let made: MadeKey;

    before(async function () {
      made = await api.makeKey({
        name: "shop",
        scopes: ["nft:read", "nft:mint"],
        collections: [collectionA.toLowerCase()],
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      });
    });

    it("POST /access-keys answers 201 with the secret once: nfto_ then at least 32 random bytes, base64url", async function () {
      expect(made.key).to.match(/^nfto_[A-Za-z0-9_-]{43,}$/);
      expect(Buffer.from(made.key.slice(5), "base64url").length).to.be.at.least(32);
      expect(Object.keys(made.body)).to.have.members([
        "id",
        "name",
        "scopes",
        "collections",
        "createdAt",
        "lastUsedAt",
        "expiresAt",
        "createdBy",
        "key",
      ]);
      expect(made.body.name).to.equal("shop");
      expect(made.body.scopes).to.have.members(["nft:read", "nft:mint"]);
      expect(made.body.collections).to.deep.equal([getAddress(collectionA)]);
      expect(made.body.lastUsedAt).to.equal(null);
      const other = await api.makeKey({ scopes: ["nft:read"] });
      expect(other.key).to.not.equal(made.key);
      expect(other.id).to.not.equal(made.id);
    });

    it("GET /access-keys lists keys without secrets: id, name, scopes, limits, createdAt, lastUsedAt, expiresAt", async function () {
      const res = await api.getAs("/access-keys", ROOT);
      expect(res.status, res.text).to.equal(200);
      const listed = (res.body.accessKeys as Record<string, unknown>[]).find((k) => k.id === made.id);
      const { key: _shownOnce, ...view } = made.body;
      expect(listed).to.deep.equal(view);
      expect(Object.keys(listed!)).to.not.include("key");
      expect(res.text).to.not.include("nfto_");
      expect(Date.parse(listed!.createdAt as string)).to.be.closeTo(Date.now(), 60_000);
    });

    it("lastUsedAt is set once a key is used", async function () {
      expect((await tokenUri(as(made))).status).to.equal(200);
      let listed: Record<string, unknown> | undefined;
      for (let i = 0; i < 40 && !listed?.lastUsedAt; i++) {
        if (i > 0) await sleep(50);
        const res = await api.getAs("/access-keys", ROOT);
        listed = (res.body.accessKeys as Record<string, unknown>[]).find((k) => k.id === made.id);
      }
      expect(Date.parse(listed!.lastUsedAt as string)).to.be.closeTo(Date.now(), 10_000);
    });

    it("a key is accepted as Authorization: Bearer (any case), X-API-Key and API_KEY", async function () {
      for (const headers of [
        bearer(made.key),
        { Authorization: `bearer ${made.key}` },
        xApiKey(made.key),
        apiKeyHeader(made.key),
      ]) {
        const res = await tokenUri(headers);
        expect(res.status, `${Object.keys(headers)[0]}: ${res.text}`).to.equal(200);
        expect(res.body.tokenURI).to.equal(`${DEFAULT_COLLECTION.baseURI}1.json`);
      }
    });

    it("the root API_KEY is accepted in the same three headers", async function () {
      for (const headers of [bearer(TEST_API_KEY), xApiKey(TEST_API_KEY), apiKeyHeader(TEST_API_KEY)]) {
        expect((await api.getAs("/access-keys", headers)).status).to.equal(200);
      }
    });

    it("no key, an unknown key and a malformed one answer 401 UNAUTHORIZED with WWW-Authenticate: Bearer", async function () {
      const none = await api.request("GET", "/access-keys", { headers: { Origin: "https://shop.example" } });
      expectUnauthorized(none);
      // A browser client may read the challenge.
      expect(none.headers.get("access-control-expose-headers")).to.match(/WWW-Authenticate/i);
      expectUnauthorized(await api.getAs("/access-keys", bearer(`nfto_${randomBytes(32).toString("base64url")}`)));
      expectUnauthorized(await api.getAs("/access-keys", xApiKey("not-a-key")));
      // An unknown key on an open route is refused too, not ignored; so is a malformed Bearer.
      expectUnauthorized(await tokenUri(bearer(`nfto_${randomBytes(32).toString("base64url")}`)));
      expectUnauthorized(await tokenUri({ Authorization: "Bearer two tokens" }));
    });

    it("a request body that is not a valid grant answers 400 VALIDATION_ERROR", async function () {
      for (const body of [
        { name: "x", scopes: [] },
        { name: "x", scopes: ["nft:everything"] },
        { name: "", scopes: ["nft:read"] },
        { name: "x", scopes: ["nft:read"], collections: ["0x1234"] },
        { name: "x", scopes: ["nft:read"], expiresAt: "tomorrow" },
        { name: "x", scopes: ["nft:read"], expiresAt: new Date(Date.now() - 1000).toISOString() },
        { name: "x", scopes: ["nft:read"], secret: "mine" },
      ]) {
        const res = await api.post("/access-keys", body, ROOT);
        expect(res.status, `${JSON.stringify(body)}: ${res.text}`).to.equal(400);
        expect(res.body.error.code).to.equal("VALIDATION_ERROR");
      }
    });
  });

  describe("every scope: a key holding only it is allowed, a key holding all but it gets 403 naming it", function () {
    const only = new Map<ScopeName, MadeKey>();
    const allBut = new Map<ScopeName, MadeKey>();

    before(async function () {
      await Promise.all(
        ALL_SCOPES.map(async (scope) => {
          only.set(scope, await api.makeKey({ name: `only ${scope}`, scopes: [scope] }));
          allBut.set(
            scope,
            await api.makeKey({ name: `all but ${scope}`, scopes: ALL_SCOPES.filter((s) => s !== scope) }),
          );
        }),
      );
    });

    /** The key without `scope` is refused (403 naming it, details path "scope") and spends no gas. */
    async function refusedWithout(scope: ScopeName, call: (headers: Record<string, string>) => Promise<ApiResponse>) {
      const res = await expectNoGasSpent(provider, owner.address, () => call(as(allBut.get(scope)!)));
      expectForbidden(res, `the scope ${scope}`);
      expect(res.body.error.details).to.deep.equal([{ path: "scope", message: `the scope ${scope}` }]);
    }

    const owned = (extra: Record<string, unknown>) => ({
      privateKey: owner.privateKey,
      contractAddress: collectionA,
      ...extra,
    });

    it("nft:read: tokenURI, total-supply and GET /nft/operations/{id}", async function () {
      const key = as(only.get("nft:read")!);
      expect((await tokenUri(key)).status).to.equal(200);
      const supply = await api.post("/nft/total-supply", owned({}), key);
      expect(supply.status, supply.text).to.equal(200);
      expect(supply.body.wallet.tokenIds).to.deep.equal(["1"]);
      const op = await api.getAs(`/nft/operations/${openOperationId}`, key);
      expect(op.status, op.text).to.equal(200);
      expect(op.body.operation).to.equal("mintForFree");

      await refusedWithout("nft:read", (h) => tokenUri(h));
      await refusedWithout("nft:read", (h) => api.post("/nft/total-supply", owned({}), h));
      await refusedWithout("nft:read", (h) => api.getAs(`/nft/operations/${openOperationId}`, h));
    });

    it("nft:mint: mint (paid), and nothing is minted without it", async function () {
      const supply = async () => (await collectionAt(collectionA, provider).totalSupply()) as bigint;
      const before = await supply();
      const body = { privateKey: minter.privateKey, contractAddress: collectionA, mintAmount: 1 };
      const refused = await expectNoGasSpent(provider, minter.address, () =>
        api.post("/nft/mint", body, as(allBut.get("nft:mint")!)),
      );
      expectForbidden(refused, "the scope nft:mint");
      expect(await supply()).to.equal(before);
      const res = await api.post("/nft/mint", body, as(only.get("nft:mint")!));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.value).to.equal(DEFAULT_COLLECTION.cost.toString());
      expect(await supply()).to.equal(before + 1n);
    });

    it("nft:mintForFree: mintForFree", async function () {
      await refusedWithout("nft:mintForFree", (h) => api.post("/nft/mintForFree", owned({ mintAmount: 1 }), h));
      const res = await api.post("/nft/mintForFree", owned({ mintAmount: 1 }), as(only.get("nft:mintForFree")!));
      expect(res.status, res.text).to.equal(200);
    });

    it("nft:configure: addUserAddressToWhitelist, setPaused, setCost", async function () {
      const listed = Wallet.createRandom().address;
      const calls: [string, Record<string, unknown>][] = [
        ["/nft/addUserAddressToWhitelist", { address: listed }],
        ["/nft/setPaused", { state: false }],
        ["/nft/setCost", { cost: DEFAULT_COLLECTION.cost.toString() }],
      ];
      for (const [route, extra] of calls) {
        await refusedWithout("nft:configure", (h) => api.post(route, owned(extra), h));
        const res = await api.post(route, owned(extra), as(only.get("nft:configure")!));
        expect(res.status, `${route}: ${res.text}`).to.equal(200);
      }
      expect(await collectionAt(collectionA, provider).whitelisted(listed)).to.equal(true);
    });

    it("nft:withdraw: withdraw (the paid mint's ether goes to the owner)", async function () {
      await refusedWithout("nft:withdraw", (h) => api.post("/nft/withdraw", owned({}), h));
      expect(await provider.getBalance(collectionA)).to.equal(DEFAULT_COLLECTION.cost);
      const res = await api.post("/nft/withdraw", owned({}), as(only.get("nft:withdraw")!));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.amount).to.equal(DEFAULT_COLLECTION.cost.toString());
      expect(await provider.getBalance(collectionA)).to.equal(0n);
    });

    it("nft:deploy: deploy", async function () {
      await refusedWithout("nft:deploy", (h) => api.post("/nft/deploy", { privateKey: owner.privateKey }, h));
      const res = await api.post("/nft/deploy", { privateKey: owner.privateKey }, as(only.get("nft:deploy")!));
      expect(res.status, res.text).to.equal(201);
    });

    it("access-keys:manage: POST, GET and DELETE /access-keys, GET /audit-events", async function () {
      const manager = only.get("access-keys:manage")!;
      const child = await api.makeKey({ scopes: ["access-keys:manage"] }, as(manager));
      expect((await api.getAs("/access-keys", as(manager))).status).to.equal(200);
      expect((await api.getAs("/audit-events", as(manager))).status).to.equal(200);
      expect((await api.delete(`/access-keys/${child.id}`, as(manager))).status).to.equal(204);

      const without = as(allBut.get("access-keys:manage")!);
      expectForbidden(
        await api.post("/access-keys", { name: "x", scopes: ["nft:read"] }, without),
        "the scope access-keys:manage",
      );
      expectForbidden(await api.getAs("/access-keys", without), "the scope access-keys:manage");
      expectForbidden(await api.getAs("/audit-events", without), "the scope access-keys:manage");
      expectForbidden(await api.delete(`/access-keys/${manager.id}`, without), "the scope access-keys:manage");
    });

    it("metrics:read: GET /metrics with a key (open mode: without a key it is open)", async function () {
      const res = await api.getAs("/metrics", as(only.get("metrics:read")!));
      expect(res.status).to.equal(200);
      expect(res.text).to.include("# TYPE");
      expectForbidden(await api.getAs("/metrics", as(allBut.get("metrics:read")!)), "the scope metrics:read");
      expect((await api.get("/metrics")).status).to.equal(200);
    });

    it("wallets:read, wallets:manage, webhooks:manage: can be granted and listed (their routes are not on main yet)", async function () {
      const res = await api.getAs("/access-keys", ROOT);
      for (const scope of ["wallets:read", "wallets:manage", "webhooks:manage"] as const) {
        const listed = (res.body.accessKeys as { id: string; scopes: string[] }[]).find(
          (k) => k.id === only.get(scope)!.id,
        );
        expect(listed?.scopes).to.deep.equal([scope]);
        // A key with only that scope holds no /nft scope.
        expectForbidden(await tokenUri(as(only.get(scope)!)), "the scope nft:read");
      }
    });
  });

  describe("collection limits", function () {
    let limitedToA: MadeKey;
    let limitedToB: MadeKey;
    let operationOnA: string;

    before(async function () {
      const nftScopes = ALL_SCOPES.filter((s) => s.startsWith("nft:"));
      limitedToA = await api.makeKey({ name: "A only", scopes: nftScopes, collections: [collectionA] });
      limitedToB = await api.makeKey({ name: "B only", scopes: nftScopes, collections: [collectionB] });
    });

    it("a key limited to collection A gets 403 naming collection B on every /nft route at B, and spends no gas", async function () {
      const key = as(limitedToA);
      const calls: [string, string, Record<string, unknown>][] = [
        ["/nft/tokenURI", minter.privateKey, { tokenId: 1 }],
        ["/nft/total-supply", minter.privateKey, {}],
        ["/nft/mint", minter.privateKey, { mintAmount: 1 }],
        ["/nft/mintForFree", owner.privateKey, { mintAmount: 1 }],
        ["/nft/addUserAddressToWhitelist", owner.privateKey, { address: minter.address }],
        ["/nft/setPaused", owner.privateKey, { state: true }],
        ["/nft/setCost", owner.privateKey, { cost: "1" }],
        ["/nft/withdraw", owner.privateKey, {}],
      ];
      for (const [route, privateKey, extra] of calls) {
        const signer = new Wallet(privateKey).address;
        const res = await expectNoGasSpent(provider, signer, () =>
          api.post(route, { privateKey, contractAddress: collectionB, ...extra }, key),
        );
        expectForbidden(res, `the collection ${collectionB}`);
        expect(res.body.error.details, route).to.deep.equal([
          { path: "collection", message: `the collection ${collectionB}` },
        ]);
      }
      expect(await collectionAt(collectionB, provider).paused()).to.equal(false);
    });

    it("the same key is allowed on A, whatever the case of the address", async function () {
      const key = as(limitedToA);
      expect((await tokenUri(key, collectionA.toLowerCase())).status).to.equal(200);
      const res = await api.post(
        "/nft/mint",
        { privateKey: minter.privateKey, contractAddress: collectionA, mintAmount: 1 },
        key,
      );
      expect(res.status, res.text).to.equal(200);
      operationOnA = res.body.operationId;
      expect(operationOnA).to.match(UUID);
    });

    it("deploy names no collection: the limited key deploys, then cannot act on what it deployed", async function () {
      const deployed = await api.post("/nft/deploy", { privateKey: owner.privateKey }, as(limitedToA));
      expect(deployed.status, deployed.text).to.equal(201);
      const res = await api.post(
        "/nft/mintForFree",
        { privateKey: owner.privateKey, contractAddress: deployed.body.contractAddress, mintAmount: 1 },
        as(limitedToA),
      );
      expectForbidden(res, "the collection");
    });

    describe("GET /nft/operations/{id} with a key answers only what it could have made", function () {
      it("the key that made it, and the root key, read it", async function () {
        for (const headers of [as(limitedToA), ROOT]) {
          const res = await api.getAs(`/nft/operations/${operationOnA}`, headers);
          expect(res.status, res.text).to.equal(200);
          expect(res.body.operationId).to.equal(operationOnA);
          expect(res.body.operation).to.equal("mint");
        }
      });

      it("a key limited to another collection gets 404 OPERATION_NOT_FOUND, as for an unknown id", async function () {
        const res = await api.getAs(`/nft/operations/${operationOnA}`, as(limitedToB));
        expect(res.status, res.text).to.equal(404);
        expect(res.body.error.code).to.equal("OPERATION_NOT_FOUND");
        const unknown = await api.getAs(`/nft/operations/00000000-0000-4000-8000-000000000000`, as(limitedToA));
        expect(unknown.status).to.equal(404);
        expect(unknown.body.error.code).to.equal("OPERATION_NOT_FOUND");
        // Same answer for "exists, not yours" and "does not exist": nothing tells them apart.
        expect(Object.keys(res.body.error)).to.deep.equal(Object.keys(unknown.body.error));
      });

      it("a key limited to A reads an operation on A that was made without a key (it could have made it)", async function () {
        expect((await api.getAs(`/nft/operations/${openOperationId}`, as(limitedToA))).status).to.equal(200);
        expect((await api.getAs(`/nft/operations/${openOperationId}`, as(limitedToB))).status).to.equal(404);
      });

      it("without a key, in open mode, the id is enough", async function () {
        const res = await api.get(`/nft/operations/${operationOnA}`);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.operationId).to.equal(operationOnA);
      });
    });
  });

  describe("expiry and revocation", function () {
    it("an expired key answers 401 UNAUTHORIZED (and is still listed with its expiresAt)", async function () {
      const expiresAt = new Date(Date.now() + 1_500);
      const key = await api.makeKey({ scopes: ["nft:read"], expiresAt: expiresAt.toISOString() });
      expect((await tokenUri(as(key))).status).to.equal(200);
      await sleep(expiresAt.getTime() - Date.now() + 50);
      expectUnauthorized(await tokenUri(as(key)));
      expectUnauthorized(await api.getAs(`/nft/operations/${openOperationId}`, as(key)));
      const listed = (await api.getAs("/access-keys", ROOT)).body.accessKeys.find(
        (k: { id: string }) => k.id === key.id,
      );
      expect(listed.expiresAt).to.equal(expiresAt.toISOString());
    });

    it("a revoked key answers 401 UNAUTHORIZED at once on this instance; it is no longer listed; a second DELETE is 404", async function () {
      const key = await api.makeKey({ scopes: ["nft:read", "access-keys:manage"] });
      expect((await tokenUri(as(key))).status).to.equal(200);
      expect((await api.delete(`/access-keys/${key.id}`, ROOT)).status).to.equal(204);
      expectUnauthorized(await tokenUri(as(key)));
      expectUnauthorized(await api.getAs("/access-keys", as(key)));
      const listed = (await api.getAs("/access-keys", ROOT)).body.accessKeys as { id: string }[];
      expect(listed.map((k) => k.id)).to.not.include(key.id);
      const again = await api.delete(`/access-keys/${key.id}`, ROOT);
      expect(again.status).to.equal(404);
      expect(again.body.error.code).to.equal("NOT_FOUND");
    });
  });

  describe("a key can grant only what it holds, and revoke only keys that hold no more", function () {
    let granter: MadeKey;
    const hourFromNow = () => new Date(Date.now() + 3_600_000);

    before(async function () {
      granter = await api.makeKey({
        name: "granter",
        scopes: ["access-keys:manage", "nft:read"],
        collections: [collectionA],
        expiresAt: hourFromNow().toISOString(),
      });
    });

    const grant = (extra: Record<string, unknown>) =>
      api.post(
        "/access-keys",
        {
          name: "child",
          scopes: ["nft:read"],
          collections: [collectionA],
          expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
          ...extra,
        },
        as(granter),
      );

    it("a scope it does not hold: 403 naming the scope", async function () {
      expectForbidden(await grant({ scopes: ["nft:read", "nft:mint"] }), "the scope nft:mint");
      expectForbidden(await grant({ scopes: ["metrics:read"] }), "the scope metrics:read");
    });

    it("a collection outside its own, or all collections: 403 naming it", async function () {
      expectForbidden(
        await grant({ collections: [collectionA, collectionB] }),
        `the collection ${collectionB.toLowerCase()}`,
      );
      expectForbidden(await grant({ collections: undefined }), "all collections");
    });

    it("a key limited to some wallets grants only those: another wallet, or all wallets, is 403", async function () {
      const [w1, w2] = [Wallet.createRandom().address, Wallet.createRandom().address];
      const walletKeeper = await api.makeKey({ scopes: ["access-keys:manage", "nft:read"], wallets: [w1] });
      expect(walletKeeper.body.wallets).to.deep.equal([w1]);
      const give = (wallets?: string[]) =>
        api.post("/access-keys", { name: "w", scopes: ["nft:read"], wallets }, as(walletKeeper));
      expectForbidden(await give([w1, w2]), `the wallet ${w2.toLowerCase()}`);
      expectForbidden(await give(undefined), "all wallets");
      const ok = await give([w1.toLowerCase()]);
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.body.wallets).to.deep.equal([w1]);
      // And it cannot revoke a key it did not make (limited to another wallet here): as unknown to it.
      const other = await api.makeKey({ scopes: ["nft:read"], wallets: [w2] });
      expect((await api.delete(`/access-keys/${other.id}`, as(walletKeeper))).status).to.equal(404);
      expect((await api.delete(`/access-keys/${ok.body.id}`, as(walletKeeper))).status).to.equal(204);
    });

    it("a life past its own expiry, or no expiry: 403", async function () {
      expectForbidden(await grant({ expiresAt: new Date(Date.now() + 7_200_000).toISOString() }), "expiry");
      expectForbidden(await grant({ expiresAt: undefined }), "expiry");
    });

    it("what it holds, within its limits: 201, and the child works", async function () {
      const res = await grant({});
      expect(res.status, res.text).to.equal(201);
      expect((await tokenUri(as(res.body.key))).status).to.equal(200);
      expectForbidden(await tokenUri(as(res.body.key), collectionB), "the collection");
    });

    it("it cannot revoke a key it did not make, holding more or less: 404 NOT_FOUND as for an unknown id; that key keeps working", async function () {
      const others = [
        await api.makeKey({ scopes: ["nft:read", "nft:mint"], collections: [collectionA] }),
        await api.makeKey({ scopes: ["nft:read"], collections: [collectionA, collectionB] }),
        await api.makeKey({
          scopes: ["nft:read"],
          collections: [collectionA],
          expiresAt: new Date(Date.now() + 600_000).toISOString(),
        }),
      ];
      for (const key of others) {
        const res = await api.delete(`/access-keys/${key.id}`, as(granter));
        expect(res.status, res.text).to.equal(404);
        expect(res.body.error.code).to.equal("NOT_FOUND");
        expect(res.body.error.message).to.equal("No live access key has this id");
        expect((await tokenUri(as(key))).status).to.equal(200);
      }
      expect((await api.delete(`/access-keys/${others[0].id}`, ROOT)).status).to.equal(204);
    });

    it("it revokes a key it made", async function () {
      const lesser = await api.makeKey(
        { scopes: ["nft:read"], collections: [collectionA], expiresAt: new Date(Date.now() + 600_000).toISOString() },
        as(granter),
      );
      expect((await api.delete(`/access-keys/${lesser.id}`, as(granter))).status).to.equal(204);
      expectUnauthorized(await tokenUri(as(lesser)));
    });
  });

  describe("keys made by keys (issue 35): createdBy, revocation in cascade, lists and revocations of one's own", function () {
    const listedIds = async (headers: Record<string, string>) =>
      ((await api.getAs("/access-keys?limit=500", headers)).body.accessKeys as { id: string }[]).map((k) => k.id);

    it("revoking a key revokes every key it made, and theirs: none works nor makes keys any more; each key shows createdBy", async function () {
      const manage = ["access-keys:manage", "nft:read"];
      const parent = await api.makeKey({ name: "parent", scopes: manage });
      const child = await api.makeKey({ name: "child", scopes: manage }, as(parent));
      const grandchild = await api.makeKey({ name: "grandchild", scopes: manage }, as(child));
      const unrelated = await api.makeKey({ name: "unrelated", scopes: manage });
      expect([parent, child, grandchild].map((k) => k.body.createdBy)).to.deep.equal([null, parent.id, child.id]);
      const listed = (await api.getAs("/access-keys?limit=500", ROOT)).body.accessKeys as JsonBody[];
      expect(listed.find((k) => k.id === grandchild.id)).to.include({ createdBy: child.id });
      for (const key of [parent, child, grandchild]) expect((await tokenUri(as(key))).status).to.equal(200);

      expect((await api.delete(`/access-keys/${parent.id}`, ROOT)).status).to.equal(204);
      for (const key of [parent, child, grandchild]) {
        expectUnauthorized(await tokenUri(as(key)));
        expectUnauthorized(await api.post("/access-keys", { name: "more", scopes: ["nft:read"] }, as(key)));
      }
      expect((await tokenUri(as(unrelated))).status).to.equal(200);
      const live = await listedIds(ROOT);
      expect(live).to.include(unrelated.id);
      expect(live).to.not.include.members([parent.id, child.id, grandchild.id]);
      // Each key revoked is an audit event; the descendants name the key they went with.
      const events = (await api.getAs("/audit-events?limit=10", ROOT)).body.auditEvents as JsonBody[];
      const revoked = events.filter((e) => e.action === "access-key.revoked").slice(0, 3);
      expect(revoked.map((e) => e.targetId)).to.have.members([parent.id, child.id, grandchild.id]);
      expect(revoked.find((e) => e.targetId === grandchild.id)!.details).to.deep.equal({ revokedWith: parent.id });
    });

    it("a key lists only the keys it made and theirs, and revokes only those (404 for any other); the root key lists and revokes all", async function () {
      const manager = await api.makeKey({ name: "manager", scopes: ["access-keys:manage", "nft:read"] });
      const made = await api.makeKey({ name: "made", scopes: ["access-keys:manage", "nft:read"] }, as(manager));
      const madeByMade = await api.makeKey({ name: "made by made", scopes: ["nft:read"] }, as(made));
      const stranger = await api.makeKey({ name: "stranger", scopes: ["nft:read"] });
      expect(await listedIds(as(manager))).to.deep.equal([madeByMade.id, made.id]);
      expect(await listedIds(as(made))).to.deep.equal([madeByMade.id]);
      for (const other of [stranger, manager]) {
        const res = await api.delete(`/access-keys/${other.id}`, as(made));
        expect(res.status, res.text).to.equal(404);
        expect(res.body.error.code).to.equal("NOT_FOUND");
      }
      expect((await tokenUri(as(stranger))).status).to.equal(200);
      expect(await listedIds(ROOT)).to.include.members([manager.id, made.id, madeByMade.id, stranger.id]);
      expect((await api.delete(`/access-keys/${madeByMade.id}`, as(manager))).status).to.equal(204);
      expectUnauthorized(await tokenUri(as(madeByMade)));
      expect((await api.delete(`/access-keys/${stranger.id}`, ROOT)).status).to.equal(204);
    });

    it("GET /access-keys pages with limit (at most 500) and cursor, newest first, without gaps or repeats", async function () {
      const pager = await api.makeKey({ name: "pager", scopes: ["access-keys:manage", "nft:read"] });
      const made: string[] = [];
      for (let i = 0; i < 5; i++)
        made.unshift((await api.makeKey({ name: `page ${i}`, scopes: ["nft:read"] }, as(pager))).id);
      const walked: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await api.getAs(`/access-keys?limit=2${cursor ? `&cursor=${cursor}` : ""}`, as(pager));
        expect(res.status, res.text).to.equal(200);
        expect(res.body.accessKeys.length).to.be.at.most(2);
        walked.push(...res.body.accessKeys.map((k: { id: string }) => k.id));
        cursor = res.body.cursor;
        pages++;
      } while (cursor);
      expect(pages).to.equal(3);
      expect(walked).to.deep.equal(made);
      // The root key's pages walk every live key the same way.
      const all = await listedIds(ROOT);
      const rootWalk: string[] = [];
      cursor = undefined;
      do {
        const res = await api.getAs(`/access-keys?limit=7${cursor ? `&cursor=${cursor}` : ""}`, ROOT);
        rootWalk.push(...res.body.accessKeys.map((k: { id: string }) => k.id));
        cursor = res.body.cursor;
      } while (cursor);
      expect(rootWalk).to.deep.equal(all);
      for (const query of [
        "limit=0",
        "limit=501",
        "cursor=abc",
        `cursor=${Buffer.from("[1]").toString("base64url")}`,
      ]) {
        const res = await api.getAs(`/access-keys?${query}`, ROOT);
        expect(res.status, `${query}: ${res.text}`).to.equal(400);
        expect(res.body.error.code).to.equal("VALIDATION_ERROR");
      }
    });
  });

  describe("withdraw", function () {
    const body = () => ({ privateKey: owner.privateKey, contractAddress: collectionA });

    it("without a key, or with an unknown one, keeps 401 INVALID_API_KEY", async function () {
      expectUnauthorized(await api.post("/nft/withdraw", body()), "INVALID_API_KEY");
      expectUnauthorized(
        await api.post("/nft/withdraw", body(), xApiKey(`nfto_${randomBytes(32).toString("base64url")}`)),
        "INVALID_API_KEY",
      );
    });

    it("a made key with nft:withdraw withdraws; one without it gets 403 FORBIDDEN", async function () {
      const mint = await api.post("/nft/mint", {
        privateKey: minter.privateKey,
        contractAddress: collectionA,
        mintAmount: 2,
      });
      expect(mint.status, mint.text).to.equal(200);
      const without = await api.makeKey({ scopes: ["nft:read", "nft:configure"] });
      const res = await expectNoGasSpent(provider, owner.address, () =>
        api.post("/nft/withdraw", body(), xApiKey(without.key)),
      );
      expectForbidden(res, "the scope nft:withdraw");
      const withScope = await api.makeKey({ scopes: ["nft:withdraw"], collections: [collectionA] });
      const balance = await provider.getBalance(collectionA);
      expect(balance).to.be.at.least(DEFAULT_COLLECTION.cost * 2n);
      const done = await api.post("/nft/withdraw", body(), { API_KEY: withScope.key });
      expect(done.status, done.text).to.equal(200);
      expect(done.body.amount).to.equal(balance.toString());
      expect(await provider.getBalance(collectionA)).to.equal(0n);
    });
  });

  describe("signing with a wallet (from)", function () {
    // A held wallet signing, and a key limited to other wallets refused 403: test/wallets/wallets.test.ts.
    it("without a key answers 401 UNAUTHORIZED, whatever the route", async function () {
      // Each route its own fields: a field a route does not know is 400 before anything else.
      for (const [route, extra] of [
        ["/nft/tokenURI", { tokenId: 1 }],
        ["/nft/mint", { mintAmount: 1 }],
        ["/nft/total-supply", {}],
      ] as const) {
        const res = await api.post(route, { from: "treasury", contractAddress: collectionA, ...extra });
        expectUnauthorized(res);
      }
      expectUnauthorized(
        await api.post("/nft/withdraw", { from: "treasury", contractAddress: collectionA }),
        "INVALID_API_KEY",
      );
    });

    it("with a key, while the service holds no wallets, answers 404 WALLET_NOT_FOUND", async function () {
      const key = await api.makeKey({ scopes: ["nft:read", "nft:mint", "wallets:read"] });
      for (const [route, extra] of [
        ["/nft/tokenURI", { tokenId: 1 }],
        ["/nft/mint", { mintAmount: 1 }],
      ] as const) {
        const res = await api.post(route, { from: "treasury", contractAddress: collectionA, ...extra }, as(key));
        expect(res.status, res.text).to.equal(404);
        expect(res.body.error.code).to.equal("WALLET_NOT_FOUND");
      }
    });
  });

  describe("audit events", function () {
    let manager: MadeKey;
    let made: MadeKey;

    before(async function () {
      manager = await api.makeKey({ name: "auditor", scopes: ["access-keys:manage", "nft:read"] });
      // Made by the manager: a key revokes only the keys it made.
      made = await api.makeKey(
        { name: "audited", scopes: ["nft:read"] },
        { ...as(manager), "X-Forwarded-For": "10.20.30.40" },
      );
      const revoked = await api.delete(`/access-keys/${made.id}`, { ...as(manager), "X-Forwarded-For": "10.20.30.41" });
      expect(revoked.status).to.equal(204);
    });

    it("creating and revoking a key are events, newest first, with the key that did it and the client address", async function () {
      const res = await api.getAs("/audit-events", as(manager));
      expect(res.status, res.text).to.equal(200);
      const [revoke, create] = res.body.auditEvents;
      expect(revoke).to.include({
        action: "access-key.revoked",
        targetType: "access-key",
        targetId: made.id,
        keyId: manager.id,
        keyName: "auditor",
        clientAddress: "10.20.30.41",
      });
      expect(create).to.include({
        action: "access-key.created",
        targetType: "access-key",
        targetId: made.id,
        keyId: manager.id,
        clientAddress: "10.20.30.40",
      });
      expect(create.details).to.deep.include({ name: "audited", scopes: ["nft:read"] });
      expect(Date.parse(revoke.at)).to.be.at.least(Date.parse(create.at));
      expect(Number(revoke.id)).to.be.greaterThan(Number(create.id));
    });

    it("pages: limit and cursor walk the whole list, newest first, without gaps or repeats", async function () {
      const all = (await api.getAs("/audit-events?limit=500", ROOT)).body.auditEvents as { id: string }[];
      expect(all.length).to.be.greaterThan(10);
      const walked: { id: string }[] = [];
      let cursor: string | undefined;
      do {
        const res = await api.getAs(`/audit-events?limit=7${cursor ? `&cursor=${cursor}` : ""}`, ROOT);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.auditEvents.length).to.be.at.most(7);
        walked.push(...res.body.auditEvents);
        cursor = res.body.cursor;
      } while (cursor);
      expect(walked.map((e) => e.id)).to.deep.equal(all.map((e) => e.id));
      const ids = all.map((e) => Number(e.id));
      expect(ids).to.deep.equal([...ids].sort((a, b) => b - a));
      expect(new Set(ids).size).to.equal(ids.length);
    });

    it("a key limited to some wallets or collections sees only the events about them: the keys it made, no other (issue 35)", async function () {
      const [w1, w2] = [Wallet.createRandom().address, Wallet.createRandom().address];
      const manage = ["access-keys:manage", "nft:read"];
      const keeper = await api.makeKey({ name: "keeper", scopes: manage, wallets: [w1] });
      const kept = await api.makeKey({ name: "kept", scopes: ["nft:read"], wallets: [w1] }, as(keeper));
      const other = await api.makeKey({ name: "other", scopes: ["nft:read"], wallets: [w2] });
      const onA = await api.makeKey({ name: "on A", scopes: manage, collections: [collectionA] });
      const targets = async (key: MadeKey | Record<string, string>) => {
        const res = await api.getAs("/audit-events?limit=500", "key" in key ? as(key as MadeKey) : key);
        expect(res.status, res.text).to.equal(200);
        return (res.body.auditEvents as { targetId: string }[]).map((e) => e.targetId);
      };
      expect(await targets(keeper)).to.deep.equal([kept.id]);
      expect(await targets(onA)).to.deep.equal([]);
      // Unlimited keys see every event.
      for (const unlimited of [ROOT, manager]) {
        expect(await targets(unlimited)).to.include.members([keeper.id, kept.id, other.id, onA.id]);
      }
    });

    it("a bad cursor or limit answers 400; without the scope 403; without a key 401", async function () {
      for (const cursor of ["abc", "-1", "1.5", "9223372036854775808", "99999999999999999999"]) {
        const res = await api.getAs(`/audit-events?cursor=${cursor}`, ROOT);
        expect(res.status, `cursor=${cursor}: ${res.text}`).to.equal(400);
        expect(res.body.error.code).to.equal("VALIDATION_ERROR");
      }
      expect((await api.getAs("/audit-events?cursor=9223372036854775807", ROOT)).status).to.equal(200);
      expect((await api.getAs("/audit-events?limit=0", ROOT)).status).to.equal(400);
      const reader = await api.makeKey({ scopes: ["nft:read"] });
      expectForbidden(await api.getAs("/audit-events", as(reader)), "the scope access-keys:manage");
      expectUnauthorized(await api.get("/audit-events"));
    });
  });

  describe("POST /collections (issue 35)", function () {
    it("needs an access key with nft:read in open mode too: 401 without one, 403 without the scope", async function () {
      expectUnauthorized(await api.post("/collections", { address: collectionA }));
      const minter = await api.makeKey({ scopes: ["nft:mint"] });
      expectForbidden(await api.post("/collections", { address: collectionA }, as(minter)), "the scope nft:read");
    });

    it("a key registers at most MAX_COLLECTIONS_PER_KEY (2 here) collections new to the index: the next is 403; known ones stay 200", async function () {
      const [first, second, third] = [
        await deployDirectly(owner.connect(provider)),
        await deployDirectly(owner.connect(provider)),
        await deployDirectly(owner.connect(provider)),
      ];
      const key = await api.makeKey({ scopes: ["nft:read"] });
      const register = (address: string, by = key) => api.post("/collections", { address }, as(by));
      expect((await register(first)).status).to.equal(201);
      expect((await register(second)).status).to.equal(201);
      const refused = await register(third);
      expectForbidden(refused, "MAX_COLLECTIONS_PER_KEY");
      expect((await api.get(`/collections/${third}`)).status, "not registered").to.equal(404);
      // Registering one already indexed costs the key nothing.
      expect((await register(first)).status).to.equal(200);
      expect((await register(collectionA)).status).to.equal(200);
      // The cap is per key.
      expect((await register(third, await api.makeKey({ scopes: ["nft:read"] }))).status).to.equal(201);
    });
  });

  describe("429 RATE_LIMITED after repeated failures from one address", function () {
    it("blocks the failing address (even with a good key, with Retry-After), while another address and keyless open calls go on", async function () {
      const good = await api.makeKey({ scopes: ["nft:read"] });
      const from = (address: string, headers: Record<string, string>) => ({ ...headers, "X-Forwarded-For": address });
      const attacker = "10.66.0.1";
      let failures = 0;
      let res: ApiResponse;
      for (;;) {
        res = await tokenUri(from(attacker, bearer(`nfto_${randomBytes(32).toString("base64url")}`)));
        if (res.status !== 401) break;
        failures++;
        expect(failures, "failures before 429 (README: 20 within a minute)").to.be.at.most(20);
      }
      expect(res.status, res.text).to.equal(429);
      expect(res.body.error.code).to.equal("RATE_LIMITED");
      expect(failures, "failures answered 401 before the 429").to.equal(20);
      const retryAfter = Number(res.headers.get("retry-after"));
      expect(retryAfter).to.be.within(1, 3600);
      expect(Number.isInteger(retryAfter)).to.equal(true);

      const blocked = await tokenUri(from(attacker, as(good)));
      expect(blocked.status).to.equal(429);
      expect(blocked.headers.get("retry-after")).to.match(/^\d+$/);
      expect((await api.getAs("/access-keys", from(attacker, ROOT))).status).to.equal(429);

      expect((await tokenUri(from("10.66.0.2", as(good)))).status).to.equal(200);
      expect((await api.getAs("/access-keys", from("10.66.0.2", ROOT))).status).to.equal(200);
      // An open route called without a key presents nothing to refuse.
      expect((await tokenUri(from(attacker, {}))).status).to.equal(200);
      console.log(`      (429 after ${failures} failures; Retry-After: ${retryAfter} s)`);
    });
  });

  describe("secrets", function () {
    it("no response (status, headers, body) and no log line holds an access-key secret (but the 201 showing it) or the root API_KEY", function () {
      expectNoAccessSecrets([api], [service.output()]);
    });

    it("the PGlite data dir holds only hashes: no secret nor API_KEY in any raw file, once the service has stopped", async function () {
      this.timeout(60_000);
      await service.stop();
      const raw = await readTree(path.join(dataDir, "pglite"));
      expect(raw.length, "the data dir was read").to.be.greaterThan(1_000_000);
      const secrets = [TEST_API_KEY, ...api.secrets];
      const found = storedForms(raw, secrets);
      expect(found.secrets, "secrets in the store's files").to.deep.equal([]);
      // The scan does look at the keys' rows: their hashes are there.
      expect(found.hashes, "hashes found").to.be.greaterThan(api.secrets.length / 2);
    });
  });
});
