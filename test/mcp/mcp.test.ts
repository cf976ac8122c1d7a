import { expect } from "chai";
import { TEST_API_KEY } from "../api/harness";
import { client1, client2, startWorld, structured, toolError, type McpWorld } from "./fixture";

describe("MCP: /mcp over Streamable HTTP, the SDK's clients of both lines (one node, one service)", function () {
  this.timeout(240_000);
  let world: McpWorld;

  before(async function () {
    this.timeout(240_000);
    world = await startWorld();
  });

  after(async function () {
    this.timeout(30_000);
    await world?.stop();
  });

  it("a read tool answers from the API (2.x client)", async () => {
    const client = await client2(world.service.url, TEST_API_KEY);
    const { tools } = await client.listTools();
    console.log(tools.map((t) => t.name).join(","));
    const answer = structured(
      await client.callTool({ name: "get_collection", arguments: { address: world.collection } }),
    );
    const http = await world.root.get(`/collections/${world.collection}`);
    expect(answer.name).to.equal(http.body.name);
    await client.close();
  });

  it("1.x client lists the same tools", async () => {
    const c1 = await client1(world.service.url, TEST_API_KEY);
    const c2 = await client2(world.service.url, TEST_API_KEY);
    const [l1, l2] = await Promise.all([c1.listTools(), c2.listTools()]);
    expect(l1.tools.map((t) => t.name)).to.deep.equal(l2.tools.map((t) => t.name));
    structured(await c1.callTool({ name: "get_collection", arguments: { address: world.collection } }));
    toolError(await c1.callTool({ name: "get_operation", arguments: { operationId: "nope" } }));
    await Promise.all([c1.close(), c2.close()]);
  });
});
