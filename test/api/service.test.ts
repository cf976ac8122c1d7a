import { readFileSync } from "node:fs";
import { expect } from "chai";
import { Wallet } from "ethers";
import { OPENAPI_FILE } from "../../scripts/openapi-document";
import { openApiDocuments } from "../../server/openapi/documents";
import { expectError, expectNoSecretsIn } from "./expectations";
import { DEV_KEYS, usedSecrets, type ApiClient } from "./harness";
import { sharedService, type SharedService } from "./shared-service";

const NFT_PATHS = [
  "/nft/tokenURI",
  "/nft/mint",
  "/nft/mintForFree",
  "/nft/addUserAddressToWhitelist",
  "/nft/setPaused",
  "/nft/setCost",
  "/nft/total-supply",
  "/nft/withdraw",
  "/nft/deploy",
];

describe("the service (HTTP surface)", function () {
  let shared: SharedService;
  let api: ApiClient;
  const caller = new Wallet(DEV_KEYS[5]);

  before(async function () {
    this.timeout(150_000);
    shared = await sharedService();
    api = shared.api;
  });

  describe("GET /health", function () {
    it("answers 200 {status:'ok', chainId:'31337', blockNumber} with the node's current block", async function () {
      const res = await api.get("/health");
      expect(res.status).to.equal(200);
      expect(Object.keys(res.body)).to.have.members(["status", "chainId", "blockNumber"]);
      expect(res.body.status).to.equal("ok");
      expect(res.body.chainId).to.equal("31337");
      expect(res.body.blockNumber).to.be.a("number");
      expect(res.body.blockNumber).to.equal(await shared.provider.getBlockNumber());
    });
  });

  describe("headers on every response", function () {
    it("a 200 carries Access-Control-Allow-Origin: *, JSON content type and a weak ETag", async function () {
      const res = await api.post("/nft/total-supply", { privateKey: DEV_KEYS[5], contractAddress: shared.collection });
      expect(res.status).to.equal(200);
      expect(res.headers.get("access-control-allow-origin")).to.equal("*");
      expect(res.headers.get("content-type")).to.equal("application/json; charset=utf-8");
      expect(res.headers.get("etag")).to.match(/^W\/".+"$/);
    });

    it("GET /health carries a weak ETag and the CORS header too", async function () {
      const res = await api.get("/health");
      expect(res.headers.get("access-control-allow-origin")).to.equal("*");
      expect(res.headers.get("content-type")).to.equal("application/json; charset=utf-8");
      expect(res.headers.get("etag")).to.match(/^W\/".+"$/);
    });

    it("an error response carries Access-Control-Allow-Origin: * and the JSON content type", async function () {
      const res = await api.post("/nft/mint", {});
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.headers.get("access-control-allow-origin")).to.equal("*");
    });

    it("a CORS preflight for POST /nft/mint is allowed from any origin", async function () {
      const res = await api.request("OPTIONS", "/nft/mint", {
        headers: {
          origin: "https://wallet.example",
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type",
        },
      });
      expect(res.status).to.be.oneOf([200, 204]);
      expect(res.headers.get("access-control-allow-origin")).to.equal("*");
      expect(res.headers.get("access-control-allow-methods") ?? "").to.include("POST");
    });
  });

  describe("GET /openapi.json", function () {
    it("is an OpenAPI 3.1 document listing every /nft path as a POST", async function () {
      const res = await api.get("/openapi.json");
      expect(res.status).to.equal(200);
      expect(res.body.openapi).to.match(/^3\.1\./);
      for (const path of NFT_PATHS) {
        expect(res.body.paths, path).to.have.property(path);
        expect(res.body.paths[path], path).to.have.property("post");
      }
      expect(res.body.paths).to.have.property("/health");
    });

    it("is the document the service builds for its listener (checked in test/unit/openapi-document.test.ts)", async function () {
      const res = await api.get("/openapi.json");
      expect(res.body).to.deep.equal(JSON.parse(JSON.stringify(openApiDocuments(false).api())));
    });

    it("is docs/openapi.json, the reference published in the repository", async function () {
      const res = await api.get("/openapi.json");
      const committed: unknown = JSON.parse(readFileSync(OPENAPI_FILE, "utf8"));
      expect(
        JSON.stringify(res.body) === JSON.stringify(committed),
        "docs/openapi.json is not what GET /openapi.json serves: run npm run docs:openapi",
      ).to.equal(true);
    });

    it("documents the withdraw route's API key header", async function () {
      const res = await api.get("/openapi.json");
      const schemes = res.body.components?.securitySchemes ?? {};
      const headerNames = Object.values(schemes).map((s) => (s as { name?: string }).name?.toLowerCase());
      expect(headerNames).to.include("api_key");
      expect(res.body.paths["/nft/withdraw"].post.security).to.be.an("array").that.is.not.empty;
    });
  });

  describe("GET /docs", function () {
    it("answers HTML whose scripts and styles all load from the service itself (no CDN)", async function () {
      const res = await fetch(`${api.baseUrl}/docs`);
      const html = await res.text();
      api.responseTexts.push(html);
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.match(/^text\/html/);
      const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
      expect(assets, "the page loads some assets").to.not.be.empty;
      for (const asset of assets) {
        expect(asset, `asset ${asset} is served by the service`).to.match(/^\/(?!\/)/);
      }
      expect(html).to.not.match(/https?:\/\/(?!127\.0\.0\.1|localhost)/);
      for (const asset of assets) {
        const assetRes = await fetch(`${api.baseUrl}${asset}`);
        const body = await assetRes.arrayBuffer();
        expect(assetRes.status, asset).to.equal(200);
        expect(body.byteLength, asset).to.be.greaterThan(1000);
      }
    });
  });

  describe("routes that do not exist", function () {
    it("GET of an unknown path answers 404 NOT_FOUND", async function () {
      expectError(await api.get("/no/such/route"), 404, "NOT_FOUND");
    });

    it("POST /nft/burn (not an operation) answers 404 NOT_FOUND", async function () {
      expectError(await api.post("/nft/burn", { privateKey: DEV_KEYS[5] }), 404, "NOT_FOUND");
    });

    it("POST /nft/burn with a body that is not JSON still answers 404 NOT_FOUND (no route, no body read)", async function () {
      expectError(await api.request("POST", "/nft/burn", { raw: "{not json" }), 404, "NOT_FOUND");
    });

    it("GET /nft/mint answers 405 METHOD_NOT_ALLOWED with Allow: POST", async function () {
      const res = await api.get("/nft/mint");
      expectError(res, 405, "METHOD_NOT_ALLOWED");
      expect(res.headers.get("allow") ?? "").to.include("POST");
    });

    it("DELETE /nft/total-supply answers 405 METHOD_NOT_ALLOWED", async function () {
      expectError(await api.request("DELETE", "/nft/total-supply"), 405, "METHOD_NOT_ALLOWED");
    });
  });

  describe("request validation (400 VALIDATION_ERROR)", function () {
    const valid = () => ({ privateKey: DEV_KEYS[5], contractAddress: shared.collection, mintAmount: "1" });

    const cases: Array<[string, () => Record<string, unknown>, string]> = [
      ["a mint without mintAmount", () => ({ ...valid(), mintAmount: undefined }), "mintAmount"],
      ["a mint without privateKey", () => ({ ...valid(), privateKey: undefined }), "privateKey"],
      ["a mint without contractAddress", () => ({ ...valid(), contractAddress: undefined }), "contractAddress"],
      ["a privateKey of 2 bytes", () => ({ ...valid(), privateKey: "0x1234" }), "privateKey"],
      [
        "a privateKey with a non-hex character",
        () => ({ ...valid(), privateKey: `0x${"g".repeat(64)}` }),
        "privateKey",
      ],
      ["a privateKey that is a number", () => ({ ...valid(), privateKey: 12345 }), "privateKey"],
      [
        "a contractAddress of 19 bytes",
        () => ({ ...valid(), contractAddress: `0x${"ab".repeat(19)}` }),
        "contractAddress",
      ],
      [
        "a contractAddress that is not hex",
        () => ({ ...valid(), contractAddress: "not-an-address" }),
        "contractAddress",
      ],
      [
        "a mixed-case contractAddress with a wrong checksum",
        () => ({ ...valid(), contractAddress: "0x5FbDB2315678afecb367f032d93F642f64180aA3" }),
        "contractAddress",
      ],
      ["a negative mintAmount", () => ({ ...valid(), mintAmount: -1 }), "mintAmount"],
      ["a fractional mintAmount", () => ({ ...valid(), mintAmount: 1.5 }), "mintAmount"],
      ["a mintAmount string that is not a decimal integer", () => ({ ...valid(), mintAmount: "1e3" }), "mintAmount"],
      ["a mintAmount of true", () => ({ ...valid(), mintAmount: true }), "mintAmount"],
    ];
    for (const [what, body, path] of cases) {
      it(`${what} answers 400 VALIDATION_ERROR naming ${path}`, async function () {
        const error = expectError(await api.post("/nft/mint", body()), 400, "VALIDATION_ERROR");
        expect(error.details, JSON.stringify(error)).to.be.an("array");
        expect(error.details.map((d: { path: string }) => d.path)).to.include(path);
      });
    }

    it("a privateKey that is 32 bytes of hex but no valid secp256k1 key answers 400 VALIDATION_ERROR", async function () {
      const invalidKey = `0x${"f".repeat(64)}`;
      usedSecrets.add(invalidKey);
      expectError(await api.post("/nft/mint", { ...valid(), privateKey: invalidKey }), 400, "VALIDATION_ERROR");
    });

    it("a body that is not JSON answers 400 VALIDATION_ERROR", async function () {
      const res = await api.request("POST", "/nft/mint", { raw: `{"privateKey": "${DEV_KEYS[5]}", "mintAmount": ` });
      expectError(res, 400, "VALIDATION_ERROR");
    });

    it("a JSON array as the body answers 400 VALIDATION_ERROR", async function () {
      expectError(await api.request("POST", "/nft/mint", { raw: "[1,2,3]" }), 400, "VALIDATION_ERROR");
    });

    it("an empty body answers 400 VALIDATION_ERROR", async function () {
      expectError(await api.request("POST", "/nft/total-supply", { raw: "" }), 400, "VALIDATION_ERROR");
    });

    it("a body over 100 kB answers 400 VALIDATION_ERROR and mints nothing", async function () {
      const before = await shared.provider.getTransactionCount(caller.address);
      const res = await api.request("POST", "/nft/mint", {
        raw: JSON.stringify({ ...valid(), padding: "x".repeat(150 * 1024) }),
      });
      expectError(res, 400, "VALIDATION_ERROR");
      expect(await shared.provider.getTransactionCount(caller.address)).to.equal(before);
    });

    it("a body just under 100 kB is still accepted", async function () {
      // Padded with whitespace: a field the route does not know would be refused (400), whatever its size.
      const res = await api.request("POST", "/nft/total-supply", {
        raw: `{"privateKey":"${DEV_KEYS[5]}",${" ".repeat(90 * 1024)}"contractAddress":"${shared.collection}"}`,
      });
      expect(res.status, res.text).to.equal(200);
    });

    it("a validation error does not echo the privateKey it was sent", async function () {
      const res = await api.post("/nft/mint", { privateKey: DEV_KEYS[5], contractAddress: "nope", mintAmount: "x" });
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.text.toLowerCase()).to.not.include(DEV_KEYS[5].slice(2));
    });
  });

  describe("secrets", function () {
    it("no response body and no log line contains a private key or the API key used in the tests", function () {
      expectNoSecretsIn(api.responseTexts, shared.service.output());
    });
  });
});
