/**
 * MCP=false (server/config): /mcp is not served, 404 as any unknown path, with or without a key;
 * the rest of the API answers as before. The service on its embedded chain.
 */
import { expect } from "chai";
import { ApiClient, ServiceProcess, TEST_API_KEY } from "../api/harness";

const ROOT = { authorization: `Bearer ${TEST_API_KEY}` };

describe("MCP=false: no /mcp, the rest of the API unchanged", function () {
  let service: ServiceProcess;
  let api: ApiClient;

  before(async function () {
    this.timeout(240_000);
    service = await ServiceProcess.start({ env: { MCP: "false", API_KEY: TEST_API_KEY, LOG_LEVEL: "warn" } });
    api = new ApiClient(service.url);
  });

  after(async function () {
    this.timeout(30_000);
    await service?.stop();
  });

  it("answers /mcp 404 with a key and without one; /health, /openapi.json and a keyed route still answer", async function () {
    this.timeout(60_000);
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
    };
    for (const headers of [ROOT, {}]) {
      const res = await fetch(`${service.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify(initialize),
      });
      expect(res.status, await res.text()).to.equal(404);
    }
    expect((await api.get("/health")).status).to.equal(200);
    const openapi = await api.get("/openapi.json");
    expect(openapi.status).to.equal(200);
    expect(Object.keys(openapi.body.paths as object)).to.include("/nft/operations");
    const keys = await api.request("GET", "/access-keys", { headers: ROOT });
    expect(keys.status, keys.text).to.equal(200);
  });
});
