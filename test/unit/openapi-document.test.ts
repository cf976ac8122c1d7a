import { expect } from "chai";
import { openApiDocuments } from "../../server/openapi/documents";
import { documentedValues, operationsOf, schemaValidator } from "../support/openapi-checks";

type Json = Record<string, unknown>;

const NFT_OPERATIONS = [
  "POST /nft/tokenURI tokenURI",
  "POST /nft/mint mint",
  "POST /nft/mintForFree mintForFree",
  "POST /nft/addUserAddressToWhitelist addUserAddressToWhitelist",
  "POST /nft/setPaused setPaused",
  "POST /nft/setCost setCost",
  "POST /nft/total-supply totalSupply",
  "POST /nft/withdraw withdraw",
  "POST /nft/deploy deploy",
  "POST /nft/createEdition createEdition",
  "POST /nft/setPaymentToken setPaymentToken",
  "POST /nft/checkout checkout",
  "POST /nft/mintWithPermit mintWithPermit",
  "GET /nft/operations listOperations",
  "GET /nft/operations/{operationId} getOperation",
];
const COLLECTION_OPERATIONS = [
  "POST /collections registerCollection",
  "GET /collections/{address} getCollection",
  "GET /collections/{address}/owners listCollectionOwners",
  "GET /collections/{address}/tokens/{tokenId} getCollectionToken",
  "GET /collections/{address}/wallets/{owner} getCollectionWallet",
];
const DROP_OPERATIONS = [
  "POST /nft/airdrop airdrop",
  "POST /nft/addToWhitelist addToWhitelist",
  "POST /nft/allowlistMint allowlistMint",
  "POST /nft/mintWithVoucher mintWithVoucher",
  "POST /nft/setRoyalty setRoyalty",
  "PUT /collections/{address}/allowlist setAllowlist",
  "GET /collections/{address}/allowlist getAllowlist",
  "GET /collections/{address}/allowlist/{account} getAllowlistEntry",
  "POST /collections/{address}/vouchers createVoucher",
  "GET /collections/{address}/vouchers/{id} getVoucher",
];
const METADATA_OPERATIONS = [
  "POST /collections/{address}/metadata/commit commitMetadata",
  "POST /collections/{address}/reveal reveal",
  "POST /nft/setBaseURI setBaseURI",
  "POST /collections/{address}/metadata/host hostMetadata",
  "PUT /collections/{address}/metadata putMetadata",
  "GET /collections/{address}/metadata getMetadata",
  "GET /metadata/{chainId}/{address}/{tokenId} serveMetadata",
  "GET /collections/{address}/metadata.car getMetadataCar",
];
const SERVICE_OPERATIONS = [
  "GET /health health",
  "GET /health/ready healthReady",
  "GET /health/live healthLive",
  "GET /metrics metrics",
  "GET /openapi.json openApiDocument",
  "GET /chains listChains",
  "GET / start",
];
const ACCESS_OPERATIONS = [
  "POST /access-keys createAccessKey",
  "GET /access-keys listAccessKeys",
  "DELETE /access-keys/{id} revokeAccessKey",
  "GET /audit-events listAuditEvents",
];
const APPROVAL_OPERATIONS = [
  "GET /approvals listApprovals",
  "POST /approvals/{id}/approve approveApproval",
  "POST /approvals/{id}/reject rejectApproval",
];
const WEBHOOK_OPERATIONS = [
  "POST /webhooks createWebhook",
  "GET /webhooks listWebhooks",
  "GET /webhooks/{id} getWebhook",
  "PATCH /webhooks/{id} updateWebhook",
  "DELETE /webhooks/{id} deleteWebhook",
  "POST /webhooks/{id}/rotate-secret rotateWebhookSecret",
  "POST /webhooks/{id}/test sendWebhookTestEvent",
  "GET /webhooks/{id}/deliveries listWebhookDeliveries",
  "POST /webhooks/{id}/deliveries/{eventId}/retry retryWebhookDelivery",
];
const WALLET_OPERATIONS = [
  "POST /wallets createWallet",
  "GET /wallets listWallets",
  "GET /wallets/{address} getWallet",
  "PATCH /wallets/{address} updateWallet",
  "DELETE /wallets/{address} deleteWallet",
];
const JOB_OPERATIONS = [
  "POST /jobs createJob",
  "GET /jobs listJobs",
  "GET /jobs/{id} getJob",
  "GET /jobs/{id}/rows listJobRows",
  "GET /jobs/{id}/events jobEvents",
  "POST /jobs/{id}/resume resumeJob",
  "POST /jobs/{id}/cancel cancelJob",
];
const USER_OPERATIONS = [
  "POST /v2/user createUser",
  "POST /v2/user/createWithList createUsersWithListInput",
  "POST /v2/user/createWithArray createUsersWithArrayInput",
  "GET /v2/user/login loginUser",
  "GET /v2/user/logout logoutUser",
  "GET /v2/user/{username} getUserByName",
  "PUT /v2/user/{username} updateUser",
  "DELETE /v2/user/{username} deleteUser",
];

const listed = (doc: object) =>
  operationsOf(doc).map(({ method, path, operationId }) => `${method.toUpperCase()} ${path} ${operationId}`);

/** The document as a client receives it: JSON (an `undefined` in the built object is no value at all). */
const served = (build: () => object): Json => JSON.parse(JSON.stringify(build())) as Json;

describe("the OpenAPI documents", function () {
  const one = served(openApiDocuments(false).api);
  const apart = openApiDocuments(true);
  const api = served(apart.api);
  const demo = served(apart.demo!);
  const documents: Array<[string, object]> = [
    ["the API listener's (demo on PORT)", one],
    ["the API listener's with DEMO_PORT", api],
    ["the demo listener's (DEMO_PORT)", demo],
  ];

  describe("operations", function () {
    it("on one listener: every /nft, /collections, service and /v2/user operation, each under its operationId", function () {
      expect(listed(one)).to.have.members([
        ...NFT_OPERATIONS,
        ...COLLECTION_OPERATIONS,
        ...DROP_OPERATIONS,
        ...METADATA_OPERATIONS,
        ...SERVICE_OPERATIONS,
        ...ACCESS_OPERATIONS,
        ...APPROVAL_OPERATIONS,
        ...WEBHOOK_OPERATIONS,
        ...WALLET_OPERATIONS,
        ...JOB_OPERATIONS,
        ...USER_OPERATIONS,
      ]);
    });

    it("with DEMO_PORT each listener documents only its own routes: /nft and the service on PORT, /v2/user on DEMO_PORT", function () {
      expect(listed(api)).to.have.members([
        ...NFT_OPERATIONS,
        ...COLLECTION_OPERATIONS,
        ...DROP_OPERATIONS,
        ...METADATA_OPERATIONS,
        ...SERVICE_OPERATIONS,
        ...ACCESS_OPERATIONS,
        ...APPROVAL_OPERATIONS,
        ...WEBHOOK_OPERATIONS,
        ...WALLET_OPERATIONS,
        ...JOB_OPERATIONS,
      ]);
      expect(listed(demo)).to.have.members([...USER_OPERATIONS, "GET /openapi.json openApiDocument", "GET / start"]);
    });

    for (const [name, doc] of documents) {
      it(`${name}: every operation has an operationId, unique in the document`, function () {
        const ids = operationsOf(doc).map((op) => op.operationId);
        expect(ids.filter((id) => typeof id !== "string" || id === "")).to.deep.equal([]);
        expect(ids.filter((id, i) => ids.indexOf(id) !== i)).to.deep.equal([]);
      });
    }
  });

  describe("access keys", function () {
    const keyed = (doc: object) =>
      Object.entries((doc as { paths: Record<string, Record<string, Json>> }).paths).flatMap(([path, item]) =>
        Object.entries(item)
          .filter(([, op]) => JSON.stringify(op.security ?? []).includes('"AccessKey"'))
          .map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
      );

    it("every operation that takes an access key documents 401, 403 and 429", function () {
      const operations = keyed(one);
      expect(operations.map((o) => o.name)).to.include.members([
        "POST /nft/tokenURI",
        "POST /nft/withdraw",
        "GET /nft/operations/{operationId}",
        "GET /metrics",
        "POST /access-keys",
      ]);
      const missing = operations.flatMap(({ name, op }) =>
        ["401", "403", "429"].filter((status) => !(status in (op.responses as Json))).map((s) => `${name} ${s}`),
      );
      expect(missing).to.deep.equal([]);
    });

    it("/nft operations document FORBIDDEN, WALLET_NOT_FOUND and their 401 code (INVALID_API_KEY for withdraw)", function () {
      for (const { name, op } of keyed(one).filter((o) => o.name.startsWith("POST /nft/"))) {
        const responses = op.responses as Record<string, { description: string }>;
        expect(responses["403"].description, name).to.include("FORBIDDEN");
        expect(responses["404"].description, name).to.include("WALLET_NOT_FOUND");
        expect(responses["401"].description, name).to.equal(
          name === "POST /nft/withdraw" ? "INVALID_API_KEY" : "UNAUTHORIZED",
        );
      }
    });
  });

  describe("examples and defaults", function () {
    for (const [name, doc] of documents) {
      it(`${name}: every example and default validates against its own schema`, function () {
        const values = documentedValues(doc);
        expect(values.length, "examples found").to.be.greaterThan(5);
        const validate = schemaValidator(doc);
        const failures = values.flatMap(({ where, schema, value }) =>
          validate(schema, value).map((error) => `${where} = ${JSON.stringify(value)}: ${error}`),
        );
        expect(failures).to.deep.equal([]);
      });
    }

    it("the privateKey example is 32 bytes of hex, as its pattern asks", function () {
      const request = (one as { components: { schemas: Record<string, Json> } }).components.schemas.MintRequest as {
        properties: Record<string, { example?: unknown; pattern?: string }>;
      };
      const { example, pattern } = request.properties.privateKey;
      expect(example).to.be.a("string").that.matches(new RegExp(pattern!));
    });
  });

  describe("request fields as clients may send them", function () {
    const doc = one;
    const validate = schemaValidator(doc);
    const requestSchema = (path: string): object => {
      const op = (doc as { paths: Record<string, { post: Json }> }).paths[path].post;
      const body = op.requestBody as { content: Record<string, { schema: object }> };
      return body.content["application/json"].schema;
    };
    const common = {
      privateKey: `0x${"ab".repeat(32)}`,
      contractAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    };

    const numeric: Array<[string, string]> = [
      ["/nft/mint", "mintAmount"],
      ["/nft/mintForFree", "mintAmount"],
      ["/nft/tokenURI", "tokenId"],
      ["/nft/setCost", "cost"],
      ["/nft/deploy", "cost"],
      ["/nft/deploy", "maxSupply"],
      ["/nft/deploy", "maxMintAmountPerTx"],
    ];
    for (const [path, field] of numeric) {
      it(`${path} documents ${field} as a JSON integer or a decimal string, as the API accepts it`, function () {
        const schema = requestSchema(path);
        // Only the fields the body declares: it takes no other (additionalProperties: false).
        const { $ref } = schema as { $ref?: string };
        const declared = Object.keys(
          (
            ($ref
              ? ((doc as Json).components as Json & { schemas: Json }).schemas[$ref.split("/").pop()!]
              : schema) as {
              properties: Json;
            }
          ).properties,
        );
        const body = (value: unknown) =>
          Object.fromEntries(
            Object.entries({ ...common, mintAmount: 1, tokenId: 1, cost: 1, [field]: value }).filter(([k]) =>
              declared.includes(k),
            ),
          );
        // maxSupply and maxMintAmountPerTx are at least 1 (a 0 is refused: the document says so).
        const atLeastOne = path === "/nft/deploy" && field !== "cost";
        for (const value of [
          2,
          "2",
          ...(atLeastOne ? ["01"] : ["0"]),
          (2n ** 256n - 1n).toString(),
          Number.MAX_SAFE_INTEGER,
        ]) {
          expect(validate(schema, body(value)), String(value)).to.be.empty;
        }
        for (const value of [
          -1,
          1.5,
          "1.5",
          "-1",
          "0x10",
          "1e3",
          true,
          null,
          2 ** 53,
          ...(atLeastOne ? [0, "0", "00"] : []),
        ]) {
          expect(validate(schema, body(value)), String(value)).to.not.be.empty;
        }
      });
    }

    it("/nft/setPaused documents state as a JSON boolean or the string true/false", function () {
      const schema = requestSchema("/nft/setPaused");
      for (const state of [true, false, "true", "false"]) expect(validate(schema, { ...common, state })).to.be.empty;
      for (const state of ["yes", 1, null]) expect(validate(schema, { ...common, state })).to.not.be.empty;
    });

    it("addresses are documented as 20 bytes of hex", function () {
      const schema = requestSchema("/nft/addUserAddressToWhitelist");
      expect(validate(schema, { ...common, address: common.contractAddress })).to.be.empty;
      expect(validate(schema, { ...common, address: "0x1234" })).to.not.be.empty;
    });
  });
});
