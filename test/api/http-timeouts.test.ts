/**
 * The HTTP server's bounds on a slow client (REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS; issue 47 item 14):
 * a request trickled in gets 408 and its connection closed; an event stream outlives both.
 * One service on its own node, with the bounds shortened so that the test takes seconds.
 */
import { connect, type Socket } from "node:net";
import { expect } from "chai";
import { Wallet, type JsonRpcProvider } from "ethers";
import { loadConfig } from "../../server/config/config";
import { ApiClient, ChainNode, deployDirectly, DEV_KEYS, directProvider, ServiceProcess, sleep } from "./harness";
import { fund, KeyedClient, newMasterKey, ROOT_AUTH } from "../wallets/fixture";
import { randomAddress, transferOwnership } from "../jobs/fixture";

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;

/** Opens a raw connection, writes `head`, then `trickle` every 200 ms; resolves with what the server answered and when it closed. */
function slowClient(url: string, head: string, trickle: string): Promise<{ answer: string; closedAfterMs: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket: Socket = connect(Number(port), hostname, () => socket.write(head));
    let answer = "";
    const timer = setInterval(() => socket.writable && socket.write(trickle), 200);
    socket.on("data", (chunk) => (answer += chunk.toString()));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(timer);
      resolve({ answer, closedAfterMs: Date.now() - started });
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after 15 s; answered: ${JSON.stringify(answer.slice(0, 200))}`));
    }, 15_000);
  });
}

describe("HTTP timeouts: a slow client is cut off, an event stream is not", function () {
  this.timeout(120_000);
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let service: ServiceProcess;

  before(async function () {
    this.timeout(240_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    service = await ServiceProcess.start({
      rpcUrl: node.rpcUrl,
      env: {
        WALLET_MASTER_KEY: newMasterKey(),
        LOG_LEVEL: "warn",
        HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      },
    });
  });

  after(async function () {
    provider?.destroy();
    await service?.stop();
    await node?.stop();
  });

  it("defaults: 120 s for a whole request (10 MB at 100 kB/s, with room), 20 s for its headers", function () {
    const config = loadConfig({});
    expect(config.requestTimeoutMs).to.equal(120_000);
    expect(config.headersTimeoutMs).to.equal(20_000);
    // Node refuses a headers bound above the request's: it is held to it.
    expect(loadConfig({ REQUEST_TIMEOUT_MS: "5000", HEADERS_TIMEOUT_MS: "9000" }).headersTimeoutMs).to.equal(5_000);
  });

  it("headers trickled in past HEADERS_TIMEOUT_MS: 408 and the connection closed", async function () {
    const { answer, closedAfterMs } = await slowClient(
      service.url,
      "GET /health HTTP/1.1\r\nHost: x\r\n",
      "X-A: b\r\n",
    );
    console.log(`      closed after ${closedAfterMs} ms (bound ${HEADERS_TIMEOUT_MS} ms)`);
    expect(answer).to.match(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).to.be.within(HEADERS_TIMEOUT_MS - 100, HEADERS_TIMEOUT_MS * 3);
  });

  it("a body trickled in past REQUEST_TIMEOUT_MS: 408 and the connection closed", async function () {
    // The JSON body parser reads it all before the route looks at it: only the bound can end it.
    const head = `POST /collections HTTP/1.1\r\nHost: x\r\nAuthorization: ${ROOT_AUTH.Authorization}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
    const { answer, closedAfterMs } = await slowClient(service.url, head, " ");
    console.log(`      closed after ${closedAfterMs} ms (bound ${REQUEST_TIMEOUT_MS} ms)`);
    expect(answer).to.match(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).to.be.within(REQUEST_TIMEOUT_MS - 100, REQUEST_TIMEOUT_MS * 3);
  });

  it("a job's event stream stays open past both bounds (it has its own limit)", async function () {
    const root = new KeyedClient(new ApiClient(service.url));
    const deployer = new Wallet(DEV_KEYS[0], provider);
    const collection = await deployDirectly(deployer);
    const treasury = await root.createWallet({ kind: "local", label: "timeouts" });
    await fund(provider, treasury.address as string, 10n ** 20n);
    await transferOwnership(deployer, collection, treasury.address as string);
    // Unmined batches: the job stays running, so its stream has no reason of its own to end.
    await provider.send("evm_setAutomine", [false]);
    const controller = new AbortController();
    try {
      const job = await root.post("/jobs", {
        kind: "airdrop",
        contractAddress: collection,
        from: "timeouts",
        recipients: [{ address: randomAddress(), amount: "1" }],
      });
      expect(job.status, job.text).to.equal(202);
      const res = await fetch(`${service.url}/jobs/${job.body.jobId as string}/events`, {
        headers: ROOT_AUTH,
        signal: controller.signal,
      });
      expect(res.status).to.equal(200);
      let received = 0;
      let ended = false;
      const reading = (async () => {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) received += chunk.length;
        ended = true;
      })().catch(() => undefined);
      await sleep(REQUEST_TIMEOUT_MS * 2);
      expect(ended, "the stream ended").to.equal(false);
      expect(received).to.be.greaterThan(0);
      controller.abort();
      await reading;
    } finally {
      await provider.send("evm_setAutomine", [true]);
    }
  });
});
