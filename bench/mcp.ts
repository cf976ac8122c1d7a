/**
 * What the MCP layer costs a read: the tool get_collection over /mcp (a JSON-RPC tools/call, the
 * server made per request, the route called in-process) against GET /collections/{address} over
 * HTTP, on one service (a separate `hardhat node`, PGlite), both with keep-alive connections, in
 * the same run, the sides alternating round by round. Target: MCP >= 0.7x the route's requests
 * per second (median round). And the MCP layer adds no JSON-RPC call to the chain: the service's
 * rpc_calls_total (GET /metrics) grows no more over N tool calls than over N route calls (the block
 * feed polls once a minute here, so that its calls do not blur the count).
 *
 * Each round also prints the service's CPU time per call on each side (from /proc): on a machine
 * others load, the req/s ratio swings with their work, while the CPU a call costs the service
 * barely moves; the target is checked on req/s.
 *
 * It also prints what the MCP layer alone costs a call, in this process: the SDK's server and
 * transport made per request and the tool's own code, with the route's answer canned (no socket,
 * no Koa, no route). Against the route's service CPU per call it bounds the ratio any dispatch
 * could reach with the SDK's stateless handling.
 *
 * BENCH_ROUNDS (default 3) rounds of BENCH_SECONDS (default 5) per side, BENCH_CONNECTIONS (8).
 * BENCH_SMOKE=1: one short round, the checks printed but not enforced (CI's smoke run).
 * Run: npm run bench:mcp
 */
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import pino from "pino";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Agent, fetch, type RequestInit } from "undici";
import { Wallet } from "ethers";
import { ChainNode, deployDirectly, DEV_KEYS, directProvider, ServiceProcess, TEST_API_KEY } from "../test/api/harness";
import { ROOT_PRINCIPAL } from "../server/access/principal";
import { legacyJsonHandler } from "../server/mcp/legacy-json";
import { PlanTokens } from "../server/mcp/plan-token";
import { mcpServerFor } from "../server/mcp/server";
import { verdict, type Check } from "./checks";
import { median } from "./median";
import { processCpu } from "./proc-cpu";

const SMOKE = process.env.BENCH_SMOKE === "1";
const ROUNDS = SMOKE ? 1 : Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = SMOKE ? 1 : Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const TARGET = 0.7;
const AUTH = { authorization: `Bearer ${TEST_API_KEY}` };

const agent = new Agent({ keepAliveTimeout: 30_000, connections: CONNECTIONS });

interface Side {
  name: string;
  /** One request; resolves when its answer is read and checked. */
  once(): Promise<void>;
}

async function send(url: string, init: RequestInit): Promise<string> {
  const res = await fetch(url, { ...init, dispatcher: agent });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${url}: ${res.status} ${text.slice(0, 200)}`);
  return text;
}

/**
 * Requests per second of `side` over SECONDS, CONNECTIONS at a time, and the CPU time the process
 * `pid` (the service) spent per request meanwhile (NaN where /proc cannot be read).
 */
async function rate(side: Side, pid: number): Promise<{ perSecond: number; cpuMs: number }> {
  const end = performance.now() + SECONDS * 1000;
  let done = 0;
  const started = performance.now();
  const cpuBefore = processCpu(pid)?.ms;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        await side.once();
        done++;
      }
    }),
  );
  const cpuAfter = processCpu(pid)?.ms;
  const cpuMs = cpuBefore === undefined || cpuAfter === undefined ? NaN : (cpuAfter - cpuBefore) / done;
  return { perSecond: done / ((performance.now() - started) / 1000), cpuMs };
}

/** A JSON-RPC answer, as JSON or as the data of the one SSE event the 2025-era stateless leg answers with. */
function jsonRpcOf(text: string): unknown {
  const data = /^data: (.*)$/m.exec(text)?.[1];
  return JSON.parse(data ?? text);
}

/** The tools/call both MCP measurements send, and the headers of the 2025-era leg it goes to. */
const toolCall = (address: string) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "get_collection", arguments: { contractAddress: address } },
});
const LEGACY_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};

/**
 * CPU milliseconds per tools/call of get_collection through the MCP layer alone, in this process:
 * the 2025-era leg as /mcp serves it (a server and a transport per request), the tool's code,
 * and `routeAnswer` (what the route answered) in place of the in-process route call.
 */
async function layerCpuMs(routeAnswer: string, address: string, calls: number): Promise<number> {
  const caller = { key: "bench", principal: ROOT_PRINCIPAL, clientAddress: "127.0.0.1" };
  const deps = {
    planTokens: new PlanTokens(randomBytes(32)),
    dispatch: () => Promise.resolve({ status: 200, headers: {}, body: routeAnswer }),
  };
  const handler = legacyJsonHandler(
    () => mcpServerFor(caller, deps, "get_collection"),
    1 << 20,
    pino({ level: "silent" }),
  );
  const message = toolCall(address);
  const authInfo = { token: "bench", clientId: "root", scopes: [] };
  const once = async () => {
    const request = new Request("http://bench/mcp", {
      method: "POST",
      headers: LEGACY_HEADERS,
      body: JSON.stringify(message),
    });
    const answer = (await (await handler(request, { authInfo, parsedBody: message })).json()) as {
      result?: { structuredContent?: unknown };
    };
    if (!answer.result?.structuredContent)
      throw new Error(`in-process tools/call: ${JSON.stringify(answer).slice(0, 300)}`);
  };
  for (let i = 0; i < calls / 4; i++) await once(); // warm-up
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) await once();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / calls;
}

async function rpcCalls(base: string): Promise<number> {
  const text = await send(`${base}/metrics`, { headers: AUTH });
  return text
    .split("\n")
    .filter((line) => line.startsWith("rpc_calls_total"))
    .reduce((sum, line) => sum + Number(line.split(" ").pop()), 0);
}

async function main(): Promise<number> {
  const node = await ChainNode.start();
  const provider = directProvider(node.rpcUrl);
  const collection = await deployDirectly(new Wallet(DEV_KEYS[0], provider), {});
  const service = await ServiceProcess.start({
    rpcUrl: node.rpcUrl,
    env: { LOG_LEVEL: "warn", BLOCK_POLL_MS: "60000" },
  });
  try {
    const base = service.url;
    await send(`${base}/collections`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
      body: JSON.stringify({ address: collection, fromBlock: 0 }),
    });
    const http: Side = {
      name: "GET /collections/{address}",
      once: async () => {
        JSON.parse(await send(`${base}/collections/${collection}`, { headers: AUTH }));
      },
    };
    const call = JSON.stringify(toolCall(collection));
    const mcp: Side = {
      name: "MCP get_collection",
      once: async () => {
        const answer = jsonRpcOf(
          await send(`${base}/mcp`, {
            method: "POST",
            headers: { ...AUTH, ...LEGACY_HEADERS },
            body: call,
          }),
        ) as { result?: { isError?: boolean; structuredContent?: unknown } };
        if (!answer.result?.structuredContent || answer.result.isError)
          throw new Error(`tools/call: ${JSON.stringify(answer).slice(0, 300)}`);
      },
    };

    // The SDK's own 2.x client: the 2026-07-28 protocol (its per-request envelope, JSON answers).
    const sdk = new Client({ name: "bench", version: "1.0.0" });
    await sdk.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: AUTH } }));
    const modern: Side = {
      name: "MCP get_collection (2.x client)",
      once: async () => {
        const result = await sdk.callTool({ name: "get_collection", arguments: { contractAddress: collection } });
        if (!result.structuredContent || result.isError) throw new Error(JSON.stringify(result).slice(0, 300));
      },
    };

    // JSON-RPC calls: N of each, counted by the service itself.
    const n = SMOKE ? 20 : 200;
    const counted = async (side: Side) => {
      const before = await rpcCalls(base);
      for (let i = 0; i < n; i++) await side.once();
      return (await rpcCalls(base)) - before;
    };
    await counted(http); // warm: the index and caches settle
    await counted(mcp);
    const httpCalls = await counted(http);
    const mcpCalls = await counted(mcp);

    const ratios: number[] = [];
    const modernRatios: number[] = [];
    const cpuRatios: number[] = [];
    const httpCpu: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const httpRate = await rate(http, service.pid);
      const mcpRate = await rate(mcp, service.pid);
      const modernRate = await rate(modern, service.pid);
      ratios.push(mcpRate.perSecond / httpRate.perSecond);
      modernRatios.push(modernRate.perSecond / httpRate.perSecond);
      cpuRatios.push(httpRate.cpuMs / mcpRate.cpuMs);
      httpCpu.push(httpRate.cpuMs);
      console.log(
        `round ${round}: ${http.name} ${httpRate.perSecond.toFixed(0)} req/s; ${mcp.name} ${mcpRate.perSecond.toFixed(0)} req/s: ${(mcpRate.perSecond / httpRate.perSecond).toFixed(2)}x; ${modern.name} ${modernRate.perSecond.toFixed(0)} req/s: ${(modernRate.perSecond / httpRate.perSecond).toFixed(2)}x; service CPU per call ${httpRate.cpuMs.toFixed(2)} / ${mcpRate.cpuMs.toFixed(2)} / ${modernRate.cpuMs.toFixed(2)} ms`,
      );
    }
    await sdk.close();
    const ratio = median(ratios);
    const routeCpu = median(httpCpu);
    const layer = await layerCpuMs(
      await send(`${base}/collections/${collection}`, { headers: AUTH }),
      collection,
      SMOKE ? 200 : 4_000,
    );
    console.log(
      `MCP layer alone, in process (SDK server per request + tool code, the route's answer canned): ${layer.toFixed(2)} ms CPU per call; the route costs the service ${routeCpu.toFixed(2)} ms per call over HTTP: no dispatch could pass ${(routeCpu / (routeCpu + layer)).toFixed(2)}x`,
    );
    console.log(`${modern.name}: ${median(modernRatios).toFixed(2)}x the route (its client's own work included)`);
    console.log(
      `service CPU per call: the route's / MCP's = ${median(cpuRatios).toFixed(2)}x (median round; what the ratio would be were the service alone the limit)`,
    );
    console.log(
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}; ${CONNECTIONS} keep-alive connections`,
    );
    const checks: Check[] = [
      {
        ok: ratio >= TARGET,
        text: `MCP get_collection = ${ratio.toFixed(2)}x the route over HTTP (target >= ${TARGET}x)`,
      },
      {
        // A call the layer added would show n times over; a poll of the block feed landing in one count is a few.
        ok: mcpCalls - httpCalls < n / 10,
        text: `JSON-RPC calls to the chain over ${n} calls: MCP ${mcpCalls}, HTTP ${httpCalls} (MCP adds none: the difference < ${n / 10})`,
      },
    ];
    const code = verdict(checks);
    return SMOKE ? 0 : code;
  } finally {
    provider.destroy();
    await service.stop();
    await node.stop();
    await agent.close();
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
