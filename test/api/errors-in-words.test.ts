import { expect } from "chai";
import { expectError, expectNoGasSpent } from "./expectations";
import { TEST_API_KEY } from "./harness";
import { describeSecrets, nftFixture } from "./nft/fixture";

/** API.md's "An error says what to do next": each refusal in words with the way out, over HTTP. */
describe("errors in words, with the way out", function () {
  const f = nftFixture();
  const AUTH = { Authorization: `Bearer ${TEST_API_KEY}` };

  describe("a contract's revert", function () {
    it("a paused collection: 409 CONTRACT_PAUSED naming it and the route that resumes it; ContractPaused() in details", async function () {
      const paused = await f.deployThroughApi();
      const pause = await f.api.post("/nft/setPaused", {
        privateKey: f.owner.privateKey,
        contractAddress: paused,
        state: true,
      });
      expect(pause.status, pause.text).to.equal(200);
      const minter = await f.fundedWallet();
      const res = await expectNoGasSpent(f.provider, minter.address, () => f.mint(minter.privateKey, paused, 1));
      const error = expectError(res, 409, "CONTRACT_PAUSED");
      expect(error.message).to.equal(
        `Collection ${paused} is paused; its owner resumes minting with POST /nft/setPaused {"state":false}`,
      );
      expect(error.details).to.deep.equal([{ path: "revert", message: "ContractPaused()" }]);
    });

    it("a cap: 409 MAX_SUPPLY_EXCEEDED says how many of maxSupply are left and to mint at most that (a dry run too)", async function () {
      const small = await f.deployThroughApi({ maxSupply: 5, maxMintAmountPerTx: 10 });
      const minter = await f.fundedWallet();
      expect((await f.mint(minter.privateKey, small, 2)).status).to.equal(200);
      const res = await expectNoGasSpent(f.provider, minter.address, () => f.mint(minter.privateKey, small, 5));
      const error = expectError(res, 409, "MAX_SUPPLY_EXCEEDED");
      expect(error.message).to.equal("Only 3 of 5 tokens are left; mint at most 3 (5 were asked)");
      expect(error.details).to.deep.equal([{ path: "revert", message: "MaxSupplyExceeded(amount=5, remaining=3)" }]);
      const dry = await f.api.post("/nft/mint?dryRun=true", {
        privateKey: minter.privateKey,
        contractAddress: small,
        mintAmount: 5,
      });
      expect(expectError(dry, 409, "MAX_SUPPLY_EXCEEDED").message).to.equal(error.message);
    });

    it("above maxMintAmountPerTx: 422 INVALID_MINT_AMOUNT says at most 10 per transaction", async function () {
      const minter = await f.fundedWallet();
      const res = await f.mint(minter.privateKey, f.collection, 11);
      const error = expectError(res, 422, "INVALID_MINT_AMOUNT");
      expect(error.message).to.match(/^At most 10 per transaction; 11 were asked/);
      expect(error.details).to.deep.equal([{ path: "revert", message: "InvalidMintAmount(amount=11, maxPerTx=10)" }]);
    });
  });

  describe("a body's fields", function () {
    const mint = (fields: Record<string, unknown>) =>
      f.api.post("/nft/mint", { privateKey: f.owner.privateKey, contractAddress: f.collection, ...fields });

    it('a missing field is "required"', async function () {
      const res = await f.api.post("/nft/mint", { privateKey: f.owner.privateKey });
      const error = expectError(res, 400, "VALIDATION_ERROR");
      expect(error.details).to.deep.equal([
        { path: "contractAddress", message: "required" },
        { path: "mintAmount", message: "required" },
      ]);
      expect(error.message).to.equal("Invalid request: contractAddress: required; mintAmount: required");
    });

    it("an 80-digit mintAmount says the maximum; 1.5 says it must be an integer", async function () {
      const huge = expectError(await mint({ mintAmount: "1".repeat(80) }), 400, "VALIDATION_ERROR");
      expect(huge.details).to.deep.equal([
        { path: "mintAmount", message: "mintAmount must be at most 2^256 - 1 (78 digits)" },
      ]);
      const half = expectError(await mint({ mintAmount: 1.5 }), 400, "VALIDATION_ERROR");
      expect(half.details).to.deep.equal([{ path: "mintAmount", message: "mintAmount must be an integer" }]);
    });

    it("a number out of range gives the range; a non-integer says so (a query's too)", async function () {
      const zero = await f.api.request("GET", "/nft/operations?limit=0", { headers: AUTH });
      expect(expectError(zero, 400, "VALIDATION_ERROR").details).to.deep.equal([
        { path: "limit", message: "must be from 1 to 500" },
      ]);
      const half = await f.api.request("GET", "/nft/operations?limit=2.5", { headers: AUTH });
      expect(expectError(half, 400, "VALIDATION_ERROR").details).to.deep.equal([
        { path: "limit", message: "must be an integer" },
      ]);
    });
  });

  describe("routes and keys", function () {
    it("an unknown route lists the nearest known one: POST /nft/totalSupply → POST /nft/total-supply", async function () {
      const res = await f.api.post("/nft/totalSupply", { contractAddress: f.collection });
      expect(expectError(res, 404, "NOT_FOUND").message).to.equal(
        "No route POST /nft/totalSupply; did you mean POST /nft/total-supply?",
      );
      const templated = await f.api.get("/walets/0x5FbDB2315678afecb367f032d93F642f64180aa3");
      expect(expectError(templated, 404, "NOT_FOUND").message).to.match(/did you mean GET \/wallets\/\{address\}\?$/);
    });

    it("a route near none points to /openapi.json", async function () {
      const res = await f.api.get("/no/such/thing/anywhere");
      expect(expectError(res, 404, "NOT_FOUND").message).to.equal(
        "No route GET /no/such/thing/anywhere: GET /openapi.json lists every route (GET /docs shows them)",
      );
    });

    it("GET / answers 200 JSON pointing to /docs, /openapi.json and /console", async function () {
      const res = await f.api.get("/");
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ docs: "/docs", openapi: "/openapi.json", console: "/console" });
      const paths = (await f.api.get("/openapi.json")).body.paths as Record<string, unknown>;
      expect(paths).to.have.property("/");
    });

    it("Authorization with a key but no Bearer: 401 saying to send Authorization: Bearer <key>, without echoing the key", async function () {
      const res = await f.api.request("GET", "/wallets", { headers: { Authorization: TEST_API_KEY } });
      const error = expectError(res, 401, "UNAUTHORIZED");
      expect(error.message).to.include("send Authorization: Bearer <key>").and.include('add "Bearer "');
      expect(res.text).to.not.include(TEST_API_KEY);
      expect((await f.api.request("GET", "/wallets", { headers: AUTH })).status).to.equal(200);
    });
  });

  describeSecrets(f);
});
