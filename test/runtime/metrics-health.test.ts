/**
 * GET /metrics, /health/live and /health/ready of apps built in this process on the in-process
 * Hardhat network (and, for an unreachable chain, on Hardhat's JSON-RPC server closed under them),
 * with a real PGlite store shared by the file (opening one costs seconds), closed by the last test.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import hre from "hardhat";
import { TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import type { JsonRpcServer } from "hardhat/types";
import { Wallet, type JsonRpcProvider } from "ethers";
import { openAccess } from "../../server/access";
import { createServiceApps, type ServiceApps } from "../../server/app/service-app";
import { ChainClient } from "../../server/chain/chain-client";
import { collectionInterface, DEFAULT_COLLECTION, deployTransaction } from "../../server/chain/collection";
import { connectInProcess } from "../../server/chain/in-process-provider";
import { connectProvider } from "../../server/chain/provider";
import { openDatabase, type SqlDriver } from "../../server/db";
import { createLogger } from "../../server/http/logger";
import { ServiceMetrics } from "../../server/metrics/metrics";
import { SqlUserStore } from "../../server/users";
import { openEngine } from "../../server/engine";
import { OPERATION_KINDS } from "../../server/nft";
import { expectError } from "../api/expectations";
import { ApiClient, DEV_KEYS } from "../api/harness";

interface Served {
  apps: ServiceApps;
  api: ApiClient;
  close(): Promise<void>;
}

/** An app on `provider` and the store `db`, listening on a free port. */
async function serve(provider: JsonRpcProvider, db: SqlDriver, metrics?: ServiceMetrics): Promise<Served> {
  const chain = new ChainClient(provider, { chainId: 31337n });
  const logger = createLogger("silent");
  const engine = await openEngine({
    chain,
    db,
    kinds: OPERATION_KINDS,
    logger,
    metrics,
    options: { chainId: 31337n, confirmations: 1, txTimeoutMs: 10_000, resendBlocks: 3 },
  });
  const apps = createServiceApps({
    chain,
    engine,
    userStore: new SqlUserStore(db),
    logger: createLogger("silent"),
    database: db,
    metrics,
    ...openAccess(db, { logger }),
  });
  const server: Server = createServer(apps.api.callback());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apps,
    api: new ApiClient(`http://127.0.0.1:${port}`),
    async close() {
      await engine.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The value of the sample `series` (name and labels, exactly as exported) in Prometheus text. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics, /health/live and /health/ready", function () {
  let snapshot: string;
  let provider: JsonRpcProvider;
  let metrics: ServiceMetrics;
  let served: Served;
  let db: SqlDriver;
  let collection: string;
  const caller = DEV_KEYS[2];
  const dataDir = mkdtempSync(path.join(tmpdir(), "nft-metrics-test-"));

  before(async function () {
    this.timeout(60_000);
    snapshot = (await hre.network.provider.request({ method: "evm_snapshot" })) as string;
    metrics = new ServiceMetrics();
    ({ provider } = await connectInProcess(hre.network.provider, metrics));
    db = await openDatabase({ dataDir: path.join(dataDir, "pglite") });
    served = await serve(provider, db, metrics);
    const owner = new Wallet(DEV_KEYS[0], provider);
    const deployed = await (await owner.sendTransaction(await deployTransaction(DEFAULT_COLLECTION))).wait();
    collection = deployed!.contractAddress!;
    await (
      await owner.sendTransaction({
        to: collection,
        data: collectionInterface().encodeFunctionData("mintForFree", [1, owner.address]),
      })
    ).wait();
  });

  after(async function () {
    await served?.close();
    await db?.close().catch(() => undefined); // the last test closes it
    provider?.destroy();
    await hre.network.provider.request({ method: "evm_revert", params: [snapshot] });
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe("GET /metrics", function () {
    it("answers Prometheus text (format 0.0.4) with the process metrics", async function () {
      const res = await served.api.get("/metrics");
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.equal("text/plain; version=0.0.4; charset=utf-8");
      expect(res.text).to.match(/^process_cpu_user_seconds_total \d/m);
      expect(res.text).to.match(/^nodejs_eventloop_lag_seconds \d/m);
    });

    it("counts requests by method, route template and status, with a latency histogram; never by raw path", async function () {
      const before = (await served.api.get("/metrics")).text;
      const series = 'http_requests_total{method="POST",route="/nft/tokenURI",status="200"}';
      const read = await served.api.post("/nft/tokenURI", {
        privateKey: caller,
        contractAddress: collection,
        tokenId: 1,
      });
      expect(read.status, read.text).to.equal(200);
      await served.api.get("/docs/swagger-ui.css");
      await served.api.get("/no/such/route/7f3a9c");
      const text = (await served.api.get("/metrics")).text;

      expect(sample(text, series)).to.equal((sample(before, series) ?? 0) + 1);
      expect(
        sample(text, 'http_request_duration_seconds_count{method="POST",route="/nft/tokenURI",status="200"}'),
      ).to.equal(sample(text, series));
      expect(text).to.match(
        /^http_request_duration_seconds_bucket\{le="0\.005",method="POST",route="\/nft\/tokenURI"/m,
      );
      expect(sample(text, 'http_requests_total{method="GET",route="/docs/:asset",status="200"}')).to.equal(1);
      expect(sample(text, 'http_requests_total{method="GET",route="(unmatched)",status="404"}')).to.equal(1);
      expect(text).to.not.include("7f3a9c");
      expect(text).to.not.include("swagger-ui.css");
    });

    it("counts JSON-RPC calls by method with their latency, and the calls that failed (a revert)", async function () {
      const before = (await served.api.get("/metrics")).text;
      const missing = await served.api.post("/nft/tokenURI", {
        privateKey: caller,
        contractAddress: collection,
        tokenId: 999,
      });
      expectError(missing, 404, "TOKEN_NOT_FOUND");
      const text = (await served.api.get("/metrics")).text;
      const calls = 'rpc_calls_total{method="eth_call"}';
      const errors = 'rpc_call_errors_total{method="eth_call"}';
      expect(sample(text, calls)).to.be.above(sample(before, calls) ?? 0);
      expect(sample(text, errors)).to.equal((sample(before, errors) ?? 0) + 1);
      expect(sample(text, 'rpc_call_duration_seconds_count{method="eth_call"}')).to.equal(sample(text, calls));
      expect(sample(text, 'rpc_calls_total{method="eth_sendRawTransaction"}')).to.equal(2); // deploy + mintForFree
      expect(sample(text, 'rpc_call_errors_total{method="eth_sendRawTransaction"}')).to.equal(undefined);
    });

    it("exports operations by status (every status from the start), nonce allocations and the signer pool size", async function () {
      const at = async (series: string) => sample((await served.api.get("/metrics")).text, series);
      for (const status of ["queued", "sent", "confirmed", "failed"])
        expect(await at(`operations_total{status="${status}"}`), status).to.equal(0);
      expect(await at("nonce_allocations_total")).to.equal(0);
      expect(await at("signer_pool_size")).to.equal(0);

      metrics.operationStatus("queued");
      metrics.operationStatus("sent");
      metrics.operationStatus("confirmed");
      metrics.nonceAllocated();
      metrics.nonceAllocated(2);
      metrics.setSignerPoolSize(3);
      expect(await at('operations_total{status="queued"}')).to.equal(1);
      expect(await at('operations_total{status="confirmed"}')).to.equal(1);
      expect(await at('operations_total{status="failed"}')).to.equal(0);
      expect(await at("nonce_allocations_total")).to.equal(3);
      expect(await at("signer_pool_size")).to.equal(3);
    });

    it("keeps each app's figures in a registry of its own (never prom-client's global one)", async function () {
      const other = await serve(provider, db);
      try {
        expect(other.apps.metrics).to.not.equal(served.apps.metrics);
        const text = (await other.api.get("/metrics")).text;
        expect(text).to.not.match(/route="\/nft\/tokenURI"/);
        expect(sample(text, 'operations_total{status="queued"}')).to.equal(0);
      } finally {
        await other.close();
      }
    });
  });

  describe("GET /health/live and /health/ready", function () {
    it("/health/live answers 200 {status:'ok'}", async function () {
      const res = await served.api.get("/health/live");
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: "ok" });
    });

    for (const route of ["/health/ready", "/health"]) {
      it(`${route} answers 200 {status:'ok', chainId:'31337', blockNumber} when the chain and the store answer`, async function () {
        const res = await served.api.get(route);
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.deep.equal({
          status: "ok",
          chainId: "31337",
          blockNumber: await provider.getBlockNumber(),
        });
      });
    }

    it("with the chain gone: /health/ready answers 503 CHAIN_UNAVAILABLE, /health/live still 200", async function () {
      this.timeout(30_000);
      const rpc = (await hre.run(TASK_NODE_CREATE_SERVER, {
        hostname: "127.0.0.1",
        port: 0,
        provider: hre.network.provider,
      })) as JsonRpcServer;
      const { port } = await rpc.listen();
      const { provider: overHttp } = await connectProvider(`http://127.0.0.1:${port}`, 2_000);
      const cut = await serve(overHttp, db);
      try {
        expect((await cut.api.get("/health/ready")).status).to.equal(200);
        await rpc.close();
        const error = expectError(await cut.api.get("/health/ready"), 503, "CHAIN_UNAVAILABLE");
        expect(error.details).to.deep.equal([{ path: "chain", message: "does not answer" }]);
        expect((await cut.api.get("/health/live")).status).to.equal(200);
      } finally {
        await cut.close();
        overHttp.destroy();
      }
    });

    it("documents /health, /health/live, /health/ready and /metrics in /openapi.json", async function () {
      const doc = (await served.api.get("/openapi.json")).body;
      for (const route of ["/health", "/health/live", "/health/ready", "/metrics"])
        expect(doc.paths, route).to.have.property(route).with.property("get");
      // 500 is on every operation: a fault of the service.
      expect(Object.keys(doc.paths["/health/ready"].get.responses)).to.have.members(["200", "500", "503"]);
    });

    // Last: it closes the file's store.
    it("with the store closed: /health/ready and /health answer 503 STORE_UNAVAILABLE, /health/live still 200", async function () {
      await db.close();
      for (const route of ["/health/ready", "/health"]) {
        const error = expectError(await served.api.get(route), 503, "STORE_UNAVAILABLE");
        expect(error.details).to.deep.equal([{ path: "store", message: "does not answer" }]);
      }
      expect((await served.api.get("/health/live")).status).to.equal(200);
    });
  });
});
