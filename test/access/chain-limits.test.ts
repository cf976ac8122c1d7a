/**
 * Access keys and chains (API.md, "Chains": access keys; issue 52). Two `hardhat node`s ("alpha" and
 * "beta", one collection at the same address on both), REQUIRE_ACCESS_KEY=true, and an RPC URL that
 * carries secrets. A key limited to alpha must get 403 naming beta on every route and tool that
 * reads or writes beta's data, before the body is read; jobs and operations of beta are not its to
 * see; a `collections` limit may name a chain.
 */
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import type { JsonRpcProvider, Wallet } from "ethers";
import { SCOPES } from "../../server/access/scopes";
import { expectError } from "../api/expectations";
import { ApiClient, ChainNode, collectionAt, ServiceProcess, TEST_API_KEY, type ApiResponse } from "../api/harness";
import { client2, structured, toolError } from "../mcp/fixture";
import { operationsOf } from "../support/openapi-checks";
import { RpcProxy } from "../support/rpc-proxy";
import { newMasterKey } from "../wallets/fixture";
import { startTwoChains } from "../support/two-chains";

const ALPHA = 31_421;
const BETA = 31_422;
const ROOT = { authorization: `Bearer ${TEST_API_KEY}` };
/** The secret parts of alpha's second RPC URL: none may be shown anywhere. */
const SECRETS = ["infuraproject1", "s3cretpassw0rd", "pathsecret", "querysecret123"];
/** Not JSON, and over every route's 100 kB limit: a route that read it would answer 400. */
const HUGE_INVALID_BODY = `{"chain":"alpha",${"x".repeat(1024 * 1024)}`;

/**
 * Routes of the OpenAPI document that read or write no chain's data, each with why: the walk
 * checks every other route. A route added to the document lands in the walk unless named here.
 */
const NOT_CHAIN_DATA: Record<string, string> = {
  "get /health": "the service's health, open (every chain's state, no chain's data)",
  "get /health/ready": "the service's health, open",
  "get /health/live": "the service's health, open",
  "get /metrics": "the service's metrics (scope metrics:read), every chain's series",
  "get /chains": "the configured chains and their URLs' states (masked), no chain's data",
  "get /openapi.json": "the API's description",
  "get /": "where to start (/docs, /openapi.json, /console): no chain's data",
  "post /access-keys": "access keys: the service's own, on no chain",
  "get /access-keys": "access keys",
  "delete /access-keys/{id}": "access keys",
  "get /audit-events": "the audit trail of the service's own changes",
  "get /approvals":
    "held writes of every chain, filtered to the key's chains (each approval names its own; no ?chain=)",
  "post /approvals/{id}/approve": "the id names its chain: another chain's is 404 NOT_FOUND, as an unknown one",
  "post /approvals/{id}/reject": "the id names its chain: another chain's is 404 NOT_FOUND, as an unknown one",
  "post /webhooks": "webhook endpoints: the service's configuration (they filter chains like collections)",
  "get /webhooks": "webhook endpoints",
  "get /webhooks/{id}": "webhook endpoints",
  "patch /webhooks/{id}": "webhook endpoints",
  "delete /webhooks/{id}": "webhook endpoints",
  "post /webhooks/{id}/rotate-secret": "webhook endpoints",
  "post /webhooks/{id}/test": "webhook endpoints",
  "get /webhooks/{id}/deliveries": "webhook endpoints",
  "post /webhooks/{id}/deliveries/{eventId}/retry": "webhook endpoints",
  "post /wallets": "a wallet is one key for every chain",
  "delete /wallets/{address}": "a wallet is one key for every chain",
  "get /nft/operations/{operationId}": "the id names its chain: another chain's is OPERATION_NOT_FOUND (tested below)",
  "get /metadata/{chainId}/{address}/{tokenId}": "public, no key (API.md, Metadata): its chain is its path's",
  "get /v2/user/login": "demo users, no chain",
  "get /v2/user/logout": "demo users",
  "post /v2/user/createWithList": "demo users",
  "post /v2/user/createWithArray": "demo users",
  "post /v2/user": "demo users",
  "get /v2/user/{username}": "demo users",
  "put /v2/user/{username}": "demo users",
  "delete /v2/user/{username}": "demo users",
};

/** MCP tools walked apart: why. */
const TOOLS_NOT_WALKED: Record<string, string> = {
  get_operation: "the id names its chain: another chain's is OPERATION_NOT_FOUND (as GET /nft/operations/{id})",
  get_job: "the id names its chain: another chain's is JOB_NOT_FOUND (as GET /jobs/{id}); takes no chain",
  cancel_job: "the id names its chain: another chain's is JOB_NOT_FOUND (as POST /jobs/{id}/cancel); takes no chain",
};

describe("access keys and chains: a key limited to one chain never reaches another", function () {
  this.timeout(300_000);
  let alpha: ChainNode;
  let beta: ChainNode;
  let proxy: RpcProxy;
  let service: ServiceProcess;
  let api: ApiClient;
  let providers: Record<"alpha" | "beta", JsonRpcProvider>;
  let owner: Wallet;
  let collection: string;
  /** Every scope, alpha only. */
  let alphaKey: string;
  const auth = (key: string) => ({ authorization: `Bearer ${key}` });

  before(async function () {
    ({ alpha, beta, providers, owner, collection } = await startTwoChains(ALPHA, BETA));
    proxy = await RpcProxy.start(alpha.rpcUrl);
    // An Infura-style URL: a project id and secret before the host, a key in the path and the query.
    const secretUrl = `${proxy.url.replace("://", `://${SECRETS[0]}:${SECRETS[1]}@`)}/v3/${SECRETS[2]}?apikey=${SECRETS[3]}`;
    service = await ServiceProcess.start({
      chains: [
        { id: ALPHA, name: "alpha", rpcUrls: [alpha.rpcUrl, secretUrl] },
        { id: BETA, name: "beta", rpcUrls: [beta.rpcUrl] },
      ],
      env: { REQUIRE_ACCESS_KEY: "true", WALLET_MASTER_KEY: newMasterKey(), BLOCK_POLL_MS: "100" },
    });
    api = new ApiClient(service.url);
    const held = await api.post("/wallets", { kind: "local", label: "shop", privateKey: owner.privateKey }, ROOT);
    expect(held.status, held.text).to.equal(201);
    for (const chain of ["alpha", "beta"]) {
      const registered = await api.post(`/collections?chain=${chain}`, { address: collection, fromBlock: 0 }, ROOT);
      expect(registered.status, registered.text).to.be.oneOf([200, 201]);
    }
    alphaKey = await makeKey({ name: "alpha-only", scopes: [...SCOPES], chains: ["alpha"] });
  });

  after(async function () {
    await service?.stop();
    await proxy?.close();
    await Promise.all([alpha?.stop(), beta?.stop()]);
  });

  async function makeKey(body: Record<string, unknown>): Promise<string> {
    const made = await api.post("/access-keys", body, ROOT);
    expect(made.status, made.text).to.equal(201);
    return made.body.key as string;
  }

  /** A request that must not hang: a bounded wait for its answer. */
  async function bounded(method: string, path: string, headers: Record<string, string>, body: string) {
    const res = await fetch(`${service.url}${path}`, {
      method,
      headers: { "content-type": "application/json", ...headers },
      body,
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Record<string, unknown> };
  }

  const forbiddenOnBeta = (res: ApiResponse, what: string) => {
    expect(res.status, `${what}: ${res.text}`).to.equal(403);
    expect(res.body.error.code, what).to.equal("FORBIDDEN");
    expect(res.body.error.message, what).to.include("beta");
  };

  it("/collections and /jobs: 403 naming beta, before the body is read (a 1 MB body that is not JSON)", async function () {
    const key = auth(alphaKey);
    forbiddenOnBeta(await api.request("GET", `/collections/${collection}?chain=beta`, { headers: key }), "GET");
    forbiddenOnBeta(
      await api.request("PUT", `/collections/${collection}/metadata?chain=beta`, {
        raw: HUGE_INVALID_BODY,
        headers: key,
      }),
      "PUT metadata",
    );
    forbiddenOnBeta(
      await api.request("POST", "/jobs?chain=beta", { raw: HUGE_INVALID_BODY, headers: key }),
      "POST /jobs",
    );
    // The chain in the body: read once the key is admitted, checked before anything else of it.
    const inBody = await api.post(
      "/jobs",
      { chain: "beta", kind: "airdrop", contractAddress: collection, from: "shop", recipients: "not a list" },
      key,
    );
    forbiddenOnBeta(inBody, "POST /jobs, chain in the body");
    // Its own chain answers.
    const own = await api.request("GET", `/collections/${collection}?chain=alpha`, { headers: key });
    expect(own.status, own.text).to.equal(200);
  });

  it("401 and a missing scope's 403 come before the body is read, and POST /jobs with the chain in its body answers (read once)", async function () {
    expectError(await api.request("POST", "/jobs", { raw: HUGE_INVALID_BODY }), 401, "UNAUTHORIZED");
    expectError(
      await api.request("PUT", `/collections/${collection}/metadata`, { raw: HUGE_INVALID_BODY }),
      401,
      "UNAUTHORIZED",
    );
    // A key without either job scope: 403 before the body (which names the chain) is read.
    const reader = await makeKey({ name: "reader", scopes: ["nft:read"] });
    expectError(
      await api.request("POST", "/jobs", { raw: HUGE_INVALID_BODY, headers: auth(reader) }),
      403,
      "FORBIDDEN",
    );
    const body = JSON.stringify({
      chain: "beta",
      kind: "airdrop",
      contractAddress: collection,
      from: "shop",
      recipients: [{ address: owner.address, amount: 1 }],
      dryRun: true,
    });
    const planned = await bounded("POST", "/jobs", ROOT, body);
    expect(planned.status, planned.text).to.equal(200);
    expect(planned.body.rows).to.equal(1);
  });

  it("jobs and operations of beta: not found by id, not listed, not cancelled; GET /jobs?chain= lists one chain's", async function () {
    const job = async (chain: string) => {
      const res = await api.post(
        "/jobs",
        {
          chain,
          kind: "airdrop",
          contractAddress: collection,
          from: "shop",
          recipients: [{ address: owner.address, amount: 1 }],
        },
        ROOT,
      );
      expect(res.status, res.text).to.equal(202);
      return res.body.jobId as string;
    };
    const [alphaJob, betaJob] = [await job("alpha"), await job("beta")];
    const key = auth(alphaKey);
    expectError(await api.request("GET", `/jobs/${betaJob}`, { headers: key }), 404, "JOB_NOT_FOUND");
    expectError(await api.request("POST", `/jobs/${betaJob}/cancel`, { headers: key }), 404, "JOB_NOT_FOUND");
    expectError(await api.request("GET", `/jobs/${betaJob}/rows`, { headers: key }), 404, "JOB_NOT_FOUND");
    const own = await api.request("GET", `/jobs/${alphaJob}`, { headers: key });
    expect(own.status, own.text).to.equal(200);
    const ids = (res: ApiResponse) => (res.body.jobs as { jobId: string; chainId: string }[]).map((j) => j.chainId);
    const listed = await api.request("GET", "/jobs?limit=500", { headers: key });
    expect(listed.status, listed.text).to.equal(200);
    expect(new Set(ids(listed))).to.deep.equal(new Set([String(ALPHA)]));
    const alphaOnly = await api.request("GET", "/jobs?chain=alpha&limit=500", { headers: ROOT });
    expect(new Set(ids(alphaOnly))).to.deep.equal(new Set([String(ALPHA)]));
    const betaOnly = await api.request("GET", "/jobs?chain=beta&limit=500", { headers: ROOT });
    expect(new Set(ids(betaOnly))).to.deep.equal(new Set([String(BETA)]));

    // An operation on beta, made with the root key: the alpha key neither reads nor lists it.
    const minted = await api.post(
      "/nft/mintForFree",
      {
        chain: "beta",
        privateKey: owner.privateKey,
        contractAddress: collection,
        receiver: owner.address,
        mintAmount: 1,
      },
      ROOT,
    );
    expect(minted.status, minted.text).to.equal(200);
    const opId = minted.body.operationId as string;
    expectError(await api.request("GET", `/nft/operations/${opId}`, { headers: key }), 404, "OPERATION_NOT_FOUND");
    const ops = await api.request("GET", "/nft/operations?limit=500", { headers: key });
    expect(ops.status, ops.text).to.equal(200);
    const chainsListed = (ops.body.operations as { chainId: string }[]).map((o) => o.chainId);
    expect(chainsListed).to.not.include(String(BETA));
    forbiddenOnBeta(
      await api.request("GET", "/nft/operations?chain=beta", { headers: key }),
      "GET /nft/operations?chain=beta",
    );
    expect((await api.request("GET", `/nft/operations/${opId}`, { headers: ROOT })).status).to.equal(200);
  });

  it('a collections limit "<chain>:<address>" holds that chain only; a bare address every chain', async function () {
    const made = await api.post(
      "/access-keys",
      { name: "alpha-collection", scopes: ["nft:read", "nft:mintForFree"], collections: [`alpha:${collection}`] },
      ROOT,
    );
    expect(made.status, made.text).to.equal(201);
    expect(made.body.collections).to.deep.equal([`${ALPHA}:${collection}`]);
    const key = auth(made.body.key as string);
    const mint = (chain: string) =>
      api.post(
        "/nft/mintForFree",
        { chain, privateKey: owner.privateKey, contractAddress: collection, receiver: owner.address, mintAmount: 1 },
        key,
      );
    const supplyBefore = await collectionAt(collection, providers.beta).totalSupply();
    expectError(await mint("beta"), 403, "FORBIDDEN");
    expect(await collectionAt(collection, providers.beta).totalSupply()).to.equal(supplyBefore);
    expectError(await api.request("GET", `/collections/${collection}?chain=beta`, { headers: key }), 403, "FORBIDDEN");
    const onAlpha = await mint("alpha");
    expect(onAlpha.status, onAlpha.text).to.equal(200);
    expect((await api.request("GET", `/collections/${collection}?chain=alpha`, { headers: key })).status).to.equal(200);

    const everywhere = await makeKey({ name: "bare", scopes: ["nft:read"], collections: [collection] });
    for (const chain of ["alpha", "beta"])
      expect(
        (await api.request("GET", `/collections/${collection}?chain=${chain}`, { headers: auth(everywhere) })).status,
      ).to.equal(200);
    expectError(
      await api.post("/access-keys", { name: "x", scopes: ["nft:read"], collections: [`gamma:${collection}`] }, ROOT),
      404,
      "CHAIN_NOT_FOUND",
    );
    expectError(
      await api.post("/access-keys", { name: "x", scopes: ["nft:read"], collections: ["alpha:0x12"] }, ROOT),
      400,
      "VALIDATION_ERROR",
    );
  });

  it("GET /chains needs a key (REQUIRE_ACCESS_KEY=true); URLs show scheme, host and port only, in /chains, /health, /metrics and the banner", async function () {
    expectError(await api.get("/chains"), 401, "UNAUTHORIZED");
    const chains = await api.request("GET", "/chains", { headers: ROOT });
    expect(chains.status, chains.text).to.equal(200);
    const urls = (chains.body.chains as { rpcUrls: { url: string }[] }[]).flatMap((c) => c.rpcUrls.map((u) => u.url));
    expect(urls).to.include(`${proxy.url}/***`);
    for (const url of urls) expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/\*\*\*$/);
    const health = await api.get("/health");
    const metrics = await api.request("GET", "/metrics", { headers: ROOT });
    expect(metrics.status).to.equal(200);
    for (const [where, text] of [
      ["/chains", chains.text],
      ["/health", health.text],
      ["/metrics", metrics.text],
      ["the service's output (its banner, its logs)", service.output()],
    ]) {
      for (const secret of SECRETS) expect(text, `${where} shows ${secret}`).to.not.include(secret);
      expect(text, where).to.not.include("/v3/");
    }
  });

  it("walks the OpenAPI document: every route on a chain's data answers 403 naming beta to the alpha key, before the body is read", async function () {
    const doc = await api.get("/openapi.json");
    expect(doc.status).to.equal(200);
    const key = auth(alphaKey);
    const walked: string[] = [];
    for (const op of operationsOf(doc.body)) {
      const name = `${op.method} ${op.path}`;
      if (name in NOT_CHAIN_DATA) continue;
      const path = op.path
        .replace("{address}", op.path.startsWith("/wallets") ? owner.address : collection)
        .replace(/\{(owner|account)\}/, owner.address)
        .replace("{tokenId}", "1")
        .replace(/\{(id|operationId)\}/, randomUUID());
      const method = op.method.toUpperCase();
      const hasBody = method !== "GET" && method !== "DELETE";
      // /nft bodies name their chain: the body is read once the key is admitted, refused before it is checked.
      const inBody = hasBody && (op.path.startsWith("/nft/") || op.path.startsWith("/wallets/"));
      const body = inBody ? JSON.stringify({ chain: "beta", unknownField: [1] }) : HUGE_INVALID_BODY;
      const res = await api.request(method, inBody ? path : `${path}?chain=beta`, {
        headers: key,
        ...(hasBody ? { raw: body } : {}),
      });
      forbiddenOnBeta(res, name);
      walked.push(name);
    }
    // The walk met the routes it is about.
    for (const route of [
      "post /jobs",
      "get /collections/{address}",
      "put /collections/{address}/metadata",
      "post /nft/mint",
      "get /wallets/{address}",
    ])
      expect(walked).to.include(route);
    for (const listed of Object.keys(NOT_CHAIN_DATA))
      expect(
        operationsOf(doc.body).map((o) => `${o.method} ${o.path}`),
        `${listed} is no route any more`,
      ).to.include(listed);
  });

  it("walks MCP's tools: each called with beta by the alpha key is an isError FORBIDDEN; create_job among them", async function () {
    const client = await client2(service.url, alphaKey);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).to.include("create_job");
      for (const tool of tools) {
        if (tool.name in TOOLS_NOT_WALKED) continue;
        // Every other tool acts on one chain, so it takes `chain` (API.md, "MCP").
        expect((tool.inputSchema as Schema).properties, tool.name).to.have.property("chain");
        const args = { ...sampleArguments(tool.inputSchema as Schema), chain: "beta" };
        let answer = await client.callTool({ name: tool.name, arguments: args });
        // A plan that needs no route (a voucher is a signature): its commit is refused.
        if (!answer.isError) {
          const plan = structured(answer);
          expect(plan.planToken, tool.name).to.be.a("string");
          answer = await client.callTool({ name: tool.name, arguments: { ...args, planToken: plan.planToken } });
        }
        const error = toolError(answer);
        expect(error.code, `${tool.name}: ${error.message}`).to.equal("FORBIDDEN");
        expect(error.message, tool.name).to.include("beta");
      }
    } finally {
      await client.close();
    }
  });

  it("an MCP JSON-RPC batch holds at most 10 messages: more is a JSON-RPC error, nothing run", async function () {
    const batch = Array.from({ length: 11 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i,
      method: "tools/call",
      params: { name: "get_collection", arguments: { contractAddress: collection, chain: "alpha" } },
    }));
    const res = await api.request("POST", "/mcp", {
      json: batch,
      headers: { ...ROOT, accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
    });
    expect(res.status, res.text).to.equal(400);
    expect(res.body.error.code).to.equal(-32600);
    expect(res.body.error.message).to.include("at most 10");
  });
});

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  minItems?: number;
  minimum?: number;
  pattern?: string;
}

/** Arguments a tool's input schema accepts (its required ones), with this world's collection and wallet. */
function sampleArguments(schema: Schema): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const name of schema.required ?? []) args[name] = sample(name, schema.properties?.[name] ?? {});
  return args;
}

const A_COLLECTION = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

function sample(name: string, schema: Schema): unknown {
  const variant = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (variant) return sample(name, variant);
  if (schema.enum) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (name === "from") return "shop";
  if (name === "signature") return `0x${"11".repeat(65)}`;
  if (type === "string") {
    if (/address|owner|account|buyer|paymentToken|^to$/i.test(name) || schema.pattern?.includes("40"))
      return A_COLLECTION;
    // An operation's or a job's id is a UUID; a token id is a decimal.
    if (/id$/i.test(name) && !/tokenId$/i.test(name)) return randomUUID();
    return "1";
  }
  if (type === "integer" || type === "number") return Math.max(1, schema.minimum ?? 1);
  if (type === "boolean") return false;
  if (type === "array")
    return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => sample(name, schema.items ?? {}));
  if (type === "object") return sampleArguments(schema);
  return "1";
}
