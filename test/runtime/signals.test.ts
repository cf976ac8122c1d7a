/**
 * Stopping the service the way `docker stop`, systemd or Kubernetes do: one signal to its process
 * alone (not to its group). A mint held in flight by a node that does not mine shows what
 * happens to the requests being served.
 */
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { Wallet, type JsonRpcProvider } from "ethers";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ROOT,
  ServiceProcess,
  deployDirectly,
  directProvider,
  sleep,
  type ApiResponse,
} from "../api/harness";
import { childrenOf, connectionRefused, eventually, processGroup } from "./processes";

const SHORT_BOUND_MS = 1_500;

describe("SIGTERM to the service's process alone", function () {
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let collection: string;

  before(async function () {
    this.timeout(90_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    collection = await deployDirectly(new Wallet(DEV_KEYS[0], provider));
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await node?.stop();
  });

  /** Sends a mint the node will not mine; resolves once its transaction is in the node's pool, with the response to come. */
  async function mintHeldInFlight(api: ApiClient, key: string): Promise<{ response: Promise<ApiResponse> }> {
    await provider.send("evm_setAutomine", [false]);
    const response = api.post("/nft/mint", { privateKey: key, contractAddress: collection, mintAmount: 1 });
    response.catch(() => undefined); // awaited by the test; a cut connection must not count as unhandled here
    await eventually("the mint's transaction in the node's pool", 20_000, async () => {
      const pending = (await provider.send("eth_getBlockByNumber", ["pending", false])) as { transactions: string[] };
      return pending.transactions.length > 0;
    });
    return { response };
  }

  async function mineAndResume() {
    await provider.send("evm_mine", []);
    await provider.send("evm_setAutomine", [true]);
  }

  describe("with a request in flight", function () {
    let service: ServiceProcess;

    before(async function () {
      this.timeout(90_000);
      service = await ServiceProcess.start({
        rpcUrl: node.rpcUrl,
        env: { TX_TIMEOUT_MS: "60000", SHUTDOWN_TIMEOUT_MS: "30000" },
      });
    });

    after(async function () {
      this.timeout(30_000);
      await mineAndResume().catch(() => undefined);
      await service?.stop();
    });

    it("is one process: npm start's command starts no child process", function () {
      expect(childrenOf(service.pid)).to.deep.equal([]);
    });

    it("stops accepting connections, lets the mint in flight answer 200, exits 0 and leaves nothing behind", async function () {
      this.timeout(60_000);
      const apiPort = Number(new URL(service.url).port);
      const { response: inFlight } = await mintHeldInFlight(new ApiClient(service.url), DEV_KEYS[4]);

      service.signal("SIGTERM");
      await eventually("new connections refused", 10_000, () => connectionRefused(apiPort));
      const stillRunning = await Promise.race([service.exited().then(() => false), sleep(500).then(() => true)]);
      expect(stillRunning, "the service waits for the request in flight").to.equal(true);

      await provider.send("evm_mine", []);
      const res = await inFlight;
      expect(res.status, res.text).to.equal(200);
      expect(res.body.status).to.equal("confirmed");
      expect(res.body.tokenIds).to.have.length(1);

      const { code, signal } = await service.exited();
      expect({ code, signal }).to.deep.equal({ code: 0, signal: null });
      expect(processGroup(service.pid), "processes left in the service's group").to.deep.equal([]);
      expect(await connectionRefused(apiPort)).to.equal(true);
      expect(service.output()).to.match(/"signal":"SIGTERM".*shutting down/);
      expect(service.output()).to.match(/"msg":"stopped"/);
      expect(service.output()).to.not.match(/requests still in flight were cut/);
      await provider.send("evm_setAutomine", [true]);
    });
  });

  describe("when the main process is `npm start` itself (as a container's command would run it)", function () {
    let service: ServiceProcess;

    before(async function () {
      this.timeout(90_000);
      service = await ServiceProcess.start({
        rpcUrl: node.rpcUrl,
        entry: { command: "npm", args: ["start"], cwd: ROOT },
      });
    });

    after(async function () {
      this.timeout(30_000);
      await service?.stop();
    });

    it("npm's one child is the service (no shell in between); SIGTERM to npm's pid stops both, exit 0, nothing left", async function () {
      this.timeout(30_000);
      const children = childrenOf(service.pid);
      expect(children).to.have.length(1);
      expect(readFileSync(`/proc/${children[0]}/cmdline`, "utf8").split("\0")[0]).to.match(/(^|\/)node$/);
      expect(childrenOf(children[0]), "the service's own children").to.deep.equal([]);

      service.signal("SIGTERM");
      expect(await service.exited()).to.deep.equal({ code: 0, signal: null });
      await eventually("every process of the group gone", 5_000, () => processGroup(service.pid).length === 0);
      expect(await connectionRefused(Number(new URL(service.url).port))).to.equal(true);
      expect(service.output()).to.match(/"msg":"stopped"/);
    });
  });

  describe(`with a request still in flight after SHUTDOWN_TIMEOUT_MS (${SHORT_BOUND_MS} ms)`, function () {
    let service: ServiceProcess;

    before(async function () {
      this.timeout(90_000);
      service = await ServiceProcess.start({
        rpcUrl: node.rpcUrl,
        env: { TX_TIMEOUT_MS: "60000", SHUTDOWN_TIMEOUT_MS: String(SHORT_BOUND_MS) },
      });
    });

    after(async function () {
      this.timeout(30_000);
      await mineAndResume().catch(() => undefined);
      await service?.stop();
    });

    it("waits the bound, then cuts the connection and still exits 0 (a second signal within a second changes nothing)", async function () {
      this.timeout(60_000);
      const { response: inFlight } = await mintHeldInFlight(new ApiClient(service.url), DEV_KEYS[5]);

      const signalledAt = Date.now();
      service.signal("SIGTERM");
      await sleep(200);
      service.signal("SIGINT"); // what npm forwarding a terminal's Ctrl-C would add
      const [outcome, exit] = await Promise.all([
        inFlight.then(
          (res) => `answered ${res.status}`,
          () => "cut",
        ),
        service.exited(),
      ]);
      const elapsed = Date.now() - signalledAt;

      expect(outcome).to.equal("cut");
      expect(exit).to.deep.equal({ code: 0, signal: null });
      expect(elapsed).to.be.at.least(SHORT_BOUND_MS - 100);
      expect(elapsed).to.be.below(SHORT_BOUND_MS + 8_000);
      expect(service.output()).to.match(/"cut":1,.*requests still in flight were cut/);
      expect(processGroup(service.pid)).to.deep.equal([]);
    });
  });
});
