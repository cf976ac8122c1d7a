import { randomUUID } from "node:crypto";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { expect } from "chai";
import { NFT_ROUTES } from "../../server/nft";
import { TOOLS, toolScopes } from "../../server/mcp/tools";
import { collectionAt, ROOT, sleep, TEST_API_KEY, type JsonBody } from "../api/harness";
import { randomAddress } from "../jobs/fixture";
import { client1, client2, startWorld, structured, toolError, type McpWorld } from "./fixture";

/** A tool is a read when every scope that lists it is a read scope. */
// A read tool has no write plan; its scope need not be a :read one (checkout is a read under nft:mint).
const isRead = (name: string) => !TOOLS.find((t) => t.name === name)!.write;

describe("MCP: /mcp over Streamable HTTP and stdio, the SDK's clients of both lines (one node, one service)", function () {
  this.timeout(240_000);
  let world: McpWorld;
  let root: Client;

  before(async function () {
    this.timeout(240_000);
    // An airdrop of a few dozen recipients passes this, so that one becomes a job.
    world = await startWorld({ MAX_GAS_PER_TX: "600000" });
    root = await client2(world.service.url, TEST_API_KEY);
  });

  after(async function () {
    this.timeout(30_000);
    await root?.close();
    await world?.stop();
  });

  /** Calls get_job until the job is no longer running (or a minute has passed); the job. */
  async function followJob(jobId: string): Promise<JsonBody> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const job = structured(await root.callTool({ name: "get_job", arguments: { id: jobId } }));
      if (job.status !== "running" || Date.now() > deadline) return job;
      await sleep(250);
    }
  }

  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
  };
  const post = (url: string, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify(initialize),
    });

  it("401 with WWW-Authenticate: Bearer without a key, with a key only in the URL, and with a key in X-API-Key", async () => {
    const url = `${world.service.url}/mcp`;
    for (const res of [
      await post(url),
      await post(`${url}?key=${TEST_API_KEY}`),
      await post(`${url}?access_token=${TEST_API_KEY}&api_key=${TEST_API_KEY}`),
      await post(url, { "X-API-Key": TEST_API_KEY }),
      await post(url, { Authorization: "Bearer nfto_not-a-key" }),
    ]) {
      expect(res.status).to.equal(401);
      expect(res.headers.get("www-authenticate")).to.match(/^Bearer\b/);
      expect(((await res.json()) as JsonBody).error.code).to.equal("UNAUTHORIZED");
    }
    const ok = await post(url, { Authorization: `Bearer ${TEST_API_KEY}` });
    expect(ok.status).to.equal(200);
  });

  // API.md's MCP section: 15 to 25 tools (checkout and mint_with_permit among them; get_collection answers the supply).
  it("listTools: 15 to 25 tools; object input schemas without oneOf/anyOf/allOf or privateKey; outputSchema; annotations true to the route's access", async () => {
    const { tools } = await root.listTools();
    expect(tools.length).to.be.within(15, 25);
    expect(tools.map((t) => t.name)).to.deep.equal(TOOLS.map((t) => t.name));
    for (const tool of tools) {
      const input = tool.inputSchema as JsonBody;
      expect(input.type, tool.name).to.equal("object");
      for (const combinator of ["oneOf", "anyOf", "allOf"]) expect(input, tool.name).not.to.have.property(combinator);
      expect(input.properties, tool.name).not.to.have.property("privateKey");
      expect((tool.outputSchema as JsonBody | undefined)?.type, tool.name).to.equal("object");
      const spec = TOOLS.find((t) => t.name === tool.name)!;
      const route = NFT_ROUTES.find((r) => r.operation === spec.route);
      if (route) expect(route.kind === "write" || !!spec.write, tool.name).to.equal(!isRead(tool.name));
      if (isRead(tool.name)) {
        expect(tool.annotations, tool.name).to.include({ readOnlyHint: true, destructiveHint: false });
      } else {
        expect(tool.annotations, tool.name).to.include({ readOnlyHint: false, destructiveHint: true });
        // A write signs with a wallet the service holds; cancel_job acts on a job, signed by the job's wallet.
        if (tool.name !== "cancel_job") expect(input.required, tool.name).to.include("from");
        expect(input.properties, tool.name).to.have.property("planToken");
      }
    }
  });

  it("a limited key sees only its tools, and a call past its route's rules is an isError result", async () => {
    const made = await world.root.post("/access-keys", { name: "reader", scopes: ["nft:read", "nft:configure"] });
    expect(made.status, made.text).to.equal(201);
    const client = await client2(world.service.url, made.body.key as string);
    try {
      const { tools } = await client.listTools();
      const expected = TOOLS.filter((t) => toolScopes(t).some((s) => s === "nft:read" || s === "nft:configure"));
      expect(tools.map((t) => t.name)).to.deep.equal(expected.map((t) => t.name));
      expect(tools.map((t) => t.name)).not.to.include("mint_for_free");
      expect(tools.map((t) => t.name)).not.to.include("get_wallet");
      // create_job is listed (a whitelist job needs nft:configure), but an airdrop job needs nft:mintForFree.
      const refused = toolError(
        await client.callTool({
          name: "create_job",
          arguments: {
            kind: "airdrop",
            contractAddress: world.collection,
            from: "treasury",
            recipients: [{ address: randomAddress(), amount: 1 }],
          },
        }),
      );
      expect(refused.code).to.equal("FORBIDDEN");
      expect(refused.message).to.include("nft:mintForFree");
    } finally {
      await client.close();
    }
  });

  it("a tool call meets its route's own wallet and collection rules: the same error code as the route over HTTP", async () => {
    const made = await world.root.post("/access-keys", {
      name: "elsewhere",
      scopes: ["nft:read", "wallets:read", "nft:mintForFree"],
      wallets: [randomAddress()],
      collections: [randomAddress()],
    });
    expect(made.status, made.text).to.equal(201);
    const key = made.body.key as string;
    const http = world.root.as(key);
    const client = await client2(world.service.url, key);
    try {
      const treasury = world.treasury.address as string;
      const wallet = await http.get(`/wallets/${treasury}`);
      expect(wallet.status, wallet.text).to.be.within(400, 499);
      const walletTool = toolError(await client.callTool({ name: "get_wallet", arguments: { address: treasury } }));
      expect(walletTool.code).to.equal(wallet.body.error.code);

      const collection = await http.get(`/collections/${world.collection}`);
      expect(collection.status, collection.text).to.be.within(400, 499);
      const collectionTool = toolError(
        await client.callTool({ name: "get_collection", arguments: { contractAddress: world.collection } }),
      );
      expect(collectionTool.code).to.equal(collection.body.error.code);

      // A write's plan is the route's own dry run: refused the same way, nothing planned, nothing sent.
      const before = await world.supply();
      const args = { contractAddress: world.collection, from: "treasury", mintAmount: 1 };
      const mint = await http.post("/nft/mintForFree?dryRun=true", args);
      expect(mint.status, mint.text).to.be.within(400, 499);
      const mintTool = toolError(await client.callTool({ name: "mint_for_free", arguments: args }));
      expect(mintTool.code).to.equal(mint.body.error.code);
      expect(await world.supply()).to.equal(before);
    } finally {
      await client.close();
    }
  });

  it("a tool call meets its route's own body limit, not /mcp's larger one", async () => {
    // /mcp takes up to 12 MB (set_allowlist's route does); /nft/addToWhitelist reads at most 100 kB.
    // 3,000 well-formed addresses (132 kB) pass the tool's schema: the route's limit refuses them.
    const args = {
      contractAddress: world.collection,
      from: "treasury",
      addresses: Array.from({ length: 3_000 }, () => randomAddress()),
    };
    const http = await world.root.post("/nft/addToWhitelist?dryRun=true", args);
    expect(http.status, http.text).to.equal(400);
    const error = toolError(await root.callTool({ name: "whitelist", arguments: args }));
    expect(error).to.include({ code: http.body.error.code, message: http.body.error.message });
  });

  it("a read tool answers from the API", async () => {
    const answer = structured(
      await root.callTool({ name: "get_collection", arguments: { contractAddress: world.collection } }),
    );
    const http = await world.root.get(`/collections/${world.collection}`);
    expect(http.status, http.text).to.equal(200);
    expect(answer).to.include({ name: http.body.name, symbol: http.body.symbol, totalSupply: http.body.totalSupply });
    // The max supply too, from the chain (POST /nft/total-supply has no tool of its own).
    const onChain = (await collectionAt(world.collection, world.provider).maxSupply()) as bigint;
    expect(http.body.maxSupply).to.equal(onChain.toString());
    expect(answer.maxSupply).to.equal(onChain.toString());
  });

  it("arguments are checked against the tool's input schema first: missing, mistyped or unknown is VALIDATION_ERROR naming it; a collection is contractAddress and chain is taken in every tool", async () => {
    const refused = async (name: string, args: Record<string, unknown>) => {
      const error = toolError(await root.callTool({ name, arguments: args }));
      expect(error.code, JSON.stringify(error)).to.equal("VALIDATION_ERROR");
      return error;
    };
    // Missing: named, and no route ran (not the route's METHOD_NOT_ALLOWED for /collections/).
    expect((await refused("get_collection", {})).message).to.include("contractAddress");
    // The read tools' old name for it is an unknown argument.
    expect((await refused("get_collection", { address: world.collection })).message).to.include("address");
    const mistyped = await refused("list_holders", { contractAddress: world.collection, limit: "ten" });
    expect(mistyped.message).to.include("limit");
    const before = await world.supply();
    const unknown = await refused("mint_for_free", {
      contractAddress: world.collection,
      from: "treasury",
      mintAmount: 1,
      colour: "red",
    });
    expect(unknown.message).to.include("colour");
    expect(await world.supply()).to.equal(before);

    const { tools } = await root.listTools();
    for (const name of [
      "get_collection",
      "list_holders",
      "get_token",
      "get_holdings",
      "list_operations",
      "mint_for_free",
    ]) {
      const properties = Object.keys((tools.find((t) => t.name === name)!.inputSchema.properties ?? {}) as object);
      expect(properties, name).to.include.members(["contractAddress", "chain"]);
      expect(properties, name).not.to.include("address");
    }
    const onChain = structured(
      await root.callTool({ name: "list_holders", arguments: { contractAddress: world.collection, chain: 31337 } }),
    );
    expect(onChain.chainId).to.equal("31337");
    const elsewhere = toolError(
      await root.callTool({
        name: "get_collection",
        arguments: { contractAddress: world.collection, chain: "nowhere" },
      }),
    );
    expect(elsewhere.code).to.equal("CHAIN_NOT_FOUND");
  });

  it("plan, then commit: the plan sends nothing, the commit mints once, a repeat mints nothing more, other arguments are refused", async () => {
    const receiver = randomAddress();
    const args = { contractAddress: world.collection, from: "treasury", mintAmount: 2, receiver };
    const before = await world.supply();

    const planned = structured(await root.callTool({ name: "mint_for_free", arguments: args }));
    expect(planned.stage).to.equal("plan");
    expect(planned.planToken).to.be.a("string");
    expect(BigInt(planned.plan.gas as string) > 0n).to.equal(true);
    expect(BigInt(planned.plan.costWei as string) > 0n).to.equal(true);
    expect(planned.plan.result).to.deep.equal({
      receiver,
      tokenIds: [String(before + 1n), String(before + 2n)],
      supplyAfter: String(before + 2n),
    });
    expect(await world.supply()).to.equal(before);

    const other = toolError(
      await root.callTool({
        name: "mint_for_free",
        arguments: { ...args, mintAmount: 3, planToken: planned.planToken },
      }),
    );
    expect(other.code).to.equal("PLAN_TOKEN_MISMATCH");
    expect(await world.supply()).to.equal(before);

    const committed = structured(
      await root.callTool({ name: "mint_for_free", arguments: { ...args, planToken: planned.planToken } }),
    );
    expect(committed.stage).to.equal("commit");
    expect(committed.result.status).to.equal("confirmed");
    expect(committed.result.tokenIds).to.deep.equal(planned.plan.result.tokenIds);
    expect(await world.supply()).to.equal(before + 2n);

    const repeated = structured(
      await root.callTool({ name: "mint_for_free", arguments: { ...args, planToken: planned.planToken } }),
    );
    expect(repeated.replayed).to.equal(true);
    expect(repeated.result.operationId).to.equal(committed.result.operationId);
    expect(await world.supply()).to.equal(before + 2n);

    // Traceable: the operation says via mcp, and the call is an audit event naming the key and the tool.
    const listed = await world.root.get(`/nft/operations?collection=${world.collection}&limit=5`);
    const op = (listed.body.operations as JsonBody[]).find((o) => o.operationId === committed.result.operationId);
    expect(op?.via).to.equal("mcp");
    const audit = await world.root.get("/audit-events?limit=10");
    const event = (audit.body.auditEvents as JsonBody[]).find(
      (e) => e.action === "mcp.tool_call" && (e.details as JsonBody).operationId === committed.result.operationId,
    );
    expect(event, audit.text).to.include({ targetId: "mint_for_free" });
  });

  it("an unknown operation is OPERATION_NOT_FOUND as a tool result", async () => {
    const error = toolError(await root.callTool({ name: "get_operation", arguments: { operationId: randomUUID() } }));
    expect(error.code).to.equal("OPERATION_NOT_FOUND");
  });

  it("a job made through create_job is followed to completed with get_job; its repeat makes no second job; its operations say via mcp", async () => {
    const recipients = [1, 2, 1].map((amount) => ({ address: randomAddress(), amount }));
    const args = { kind: "airdrop", contractAddress: world.collection, from: "treasury", recipients };
    const planned = structured(await root.callTool({ name: "create_job", arguments: args }));
    expect(planned.plan).to.include({ dryRun: true, rows: 3 });
    const committed = structured(
      await root.callTool({ name: "create_job", arguments: { ...args, planToken: planned.planToken } }),
    );
    const jobId = committed.result.jobId as string;
    expect(jobId).to.be.a("string");
    const again = structured(
      await root.callTool({ name: "create_job", arguments: { ...args, planToken: planned.planToken } }),
    );
    expect(again.result.jobId).to.equal(jobId);
    const job = await followJob(jobId);
    expect(job.status).to.equal("completed");
    expect(job.rowsByState).to.include({ confirmed: 3, failed: 0 });
    // The runner sends the batches outside the tool's call: the job row carries via to them.
    const batches = (job.batches as JsonBody[]).map((b) => b.operationId as string);
    expect(batches).to.have.length.greaterThan(0);
    for (const operationId of batches) {
      const op = await world.root.get(`/nft/operations/${operationId}`);
      expect(op.status, op.text).to.equal(200);
      expect(op.body.via, op.text).to.equal("mcp");
    }
  });

  it("an airdrop larger than one transaction plans and commits as a job to follow with get_job", async () => {
    const recipients = Array.from({ length: 40 }, () => ({ address: randomAddress(), amount: 1 }));
    const args = { contractAddress: world.collection, from: "treasury", recipients };
    const before = await world.supply();
    const planned = structured(await root.callTool({ name: "airdrop", arguments: args }));
    expect(planned).to.include({ stage: "plan", job: true });
    expect(planned.plan).to.include({ dryRun: true, rows: 40 });
    expect(planned.plan.batches).to.be.greaterThan(1);
    const committed = structured(
      await root.callTool({ name: "airdrop", arguments: { ...args, planToken: planned.planToken } }),
    );
    expect(committed.job).to.equal(true);
    const jobId = committed.result.jobId as string;
    const job = await followJob(jobId);
    expect(job.status).to.equal("completed");
    expect(await world.supply()).to.equal(before + 40n);
  });

  it("the 1.x client lists the same tools as the 2.x client, and its calls work", async () => {
    const old = await client1(world.service.url, TEST_API_KEY);
    try {
      const [l1, l2] = await Promise.all([old.listTools(), root.listTools()]);
      expect(l1.tools).to.deep.equal(l2.tools);
      const answer = structured(
        await old.callTool({ name: "get_collection", arguments: { contractAddress: world.collection } }),
      );
      expect(answer.address ?? answer.name).to.be.a("string");
      expect(toolError(await old.callTool({ name: "get_operation", arguments: { operationId: "x" } })).code).to.equal(
        "OPERATION_NOT_FOUND",
      );
    } finally {
      await old.close();
    }
  });

  it("stdio through npx nft-ops mcp: the same tool list, and a call that works", async () => {
    const client = new Client({ name: "desktop", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: "npx",
        args: ["nft-ops", "mcp"],
        cwd: ROOT,
        env: {
          PATH: `${path.join(ROOT, "node_modules", ".bin")}:${process.env.PATH}`,
          NFT_OPS_URL: world.service.url,
          NFT_OPS_KEY: TEST_API_KEY,
        },
        stderr: "inherit",
      }),
    );
    try {
      const [viaStdio, viaHttp] = await Promise.all([client.listTools(), root.listTools()]);
      expect(viaStdio.tools.map((t) => t.name)).to.deep.equal(viaHttp.tools.map((t) => t.name));
      expect(viaStdio.tools.map((t) => t.inputSchema)).to.deep.equal(viaHttp.tools.map((t) => t.inputSchema));
      const answer = structured(
        await client.callTool({ name: "get_collection", arguments: { contractAddress: world.collection } }),
      );
      expect(answer.symbol).to.be.a("string");
    } finally {
      await client.close();
    }
  });
});
