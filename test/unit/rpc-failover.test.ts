/**
 * The failover transport's rules (API.md "RPC failover"), against real `hardhat node`s behind two
 * RpcProxy instances: one chain, two URLs. Reads move to the second URL at once on each failure
 * of the first; a failed URL sits out a doubling cooldown and comes back through a background
 * probe; a URL far behind is not read from; a signed transaction goes to every URL, and a refusal
 * from one URL while another's answer is lost is no refusal.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import { FailoverTransport } from "../../server/chain/rpc-failover";
import { ChainNode, DEV_KEYS, sleep } from "../api/harness";
import { ChainControl } from "../support/chain-control";
import { RpcProxy } from "../support/rpc-proxy";

const TIMEOUT_MS = 500;
const call = (method: string, params: unknown[] = [], id = 1) => ({ jsonrpc: "2.0", id, method, params });

interface Answer {
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

describe("RPC failover: the transport's rules (two URLs, one chain)", function () {
  this.timeout(120_000);
  let node: ChainNode;
  let lagging: ChainNode;
  let control: ChainControl;
  let first: RpcProxy;
  let second: RpcProxy;
  let transport: FailoverTransport;
  const outcomes: string[] = [];

  before(async function () {
    [node, lagging] = await Promise.all([ChainNode.start(), ChainNode.start()]);
    control = new ChainControl(node.rpcUrl);
    await control.mine(20); // the lagging node stays at block 0
    first = await RpcProxy.start(node.rpcUrl, { holdMs: 60_000 });
    second = await RpcProxy.start(node.rpcUrl, { holdMs: 60_000 });
  });

  after(async function () {
    await Promise.all([first?.close(), second?.close()]);
    await Promise.all([node?.stop(), lagging?.stop()]);
  });

  beforeEach(function () {
    first.mode = "forward";
    second.mode = "forward";
    first.retarget(node.rpcUrl);
    first.clearRules();
    second.clearRules();
    outcomes.length = 0;
    transport = new FailoverTransport([`${first.url}/v2/abcdefghijklmnop0123`, second.url], {
      timeoutMs: TIMEOUT_MS,
      maxLagBlocks: 5,
      chain: "31337",
      observer: { rpcRequest: (_chain, url, outcome, n) => outcomes.push(`${url} ${outcome} ${n}`) },
    });
  });

  afterEach(function () {
    transport.close();
  });

  for (const mode of ["502", "429", "reset", "hang"] as const) {
    it(`moves a read to the next URL at once when the first answers ${mode}, and sends none to it while it is down`, async function () {
      first.mode = mode;
      const started = performance.now();
      const answer = (await transport.send(call("eth_blockNumber"))) as Answer;
      const firstMs = performance.now() - started;
      expect(answer.result).to.equal(`0x${(await control.blockNumber()).toString(16)}`);
      expect(firstMs).to.be.below(mode === "hang" ? TIMEOUT_MS + 1_000 : 1_000);
      const [url1, url2] = transport.states();
      expect(url1.status).to.equal("down");
      expect(url1.url).to.equal(`${first.url}/***`); // masked: the key in the path is not shown
      expect(url1.lastError).to.be.a("string");
      expect(url2.status).to.equal("ok");
      // While it is down, reads go straight to the second URL: none waits on the first.
      first.resetCounts();
      const t0 = performance.now();
      for (let i = 0; i < 10; i++) await transport.send(call("eth_chainId"));
      expect(performance.now() - t0).to.be.below(1_000);
      expect(first.total()).to.equal(0);
      expect(outcomes.some((o) => o.startsWith(`${first.url}/*** `) && !o.includes(" ok "))).to.equal(true);
    });
  }

  it("moves a read on for a JSON-RPC internal error, not for a revert", async function () {
    first.answerWith("eth_chainId", { error: { code: -32603, message: "Internal error" } });
    const answer = (await transport.send(call("eth_chainId"))) as Answer;
    expect(answer.result).to.equal("0x7a69");
    expect(transport.states()[0].status).to.equal("down");
  });

  it("keeps a revert (an error with data) as the answer, from the first URL", async function () {
    first.answerWith("eth_call", { error: { code: -32603, message: "execution reverted", data: "0x" } });
    second.resetCounts();
    const answer = (await transport.send(
      call("eth_call", [{ to: Wallet.createRandom().address }, "latest"]),
    )) as Answer;
    expect(answer.error?.message).to.equal("execution reverted");
    expect(transport.states()[0].status).to.equal("ok");
    expect(second.total()).to.equal(0);
  });

  it("gives a failed URL a cooldown from 1 s that doubles, probes it in the background, and reads from it again once it answers", async function () {
    first.mode = "502";
    await transport.send(call("eth_chainId"));
    expect(transport.states()[0].status).to.equal("down");
    first.resetCounts();
    await sleep(1_300); // the first probe (after 1 s) fails: the next is 2 s later
    expect(first.calls.get("eth_blockNumber")).to.equal(1);
    expect(transport.states()[0].status).to.equal("down");
    await sleep(1_000);
    expect(first.total()).to.equal(1); // still in its 2 s cooldown
    first.mode = "forward";
    await sleep(1_500); // the second probe answers
    expect(first.total()).to.equal(2);
    expect(transport.states()[0].status).to.equal("ok");
    second.resetCounts();
    await transport.send(call("eth_chainId"));
    expect(second.total()).to.equal(0); // back in first place
  });

  it("marks a URL far behind `behind`, never answers from it, and takes it back once it has caught up", async function () {
    await transport.send(call("eth_blockNumber")); // the first URL's head: the chain's
    first.retarget(lagging.rpcUrl); // now a node at block 0
    const answer = (await transport.send(call("eth_blockNumber"))) as Answer;
    expect(Number(BigInt(answer.result as string))).to.equal(await control.blockNumber());
    expect(transport.states()[0].status).to.equal("behind");
    expect(transport.states()[0].lastError).to.match(/more than 5 blocks below/);
    // A block the lagging node lacks is never an answer: the read went to the second URL.
    second.resetCounts();
    const block = (await transport.send(call("eth_getBlockByNumber", ["0x10", false]))) as Answer;
    expect(block.result).to.not.equal(null);
    expect(second.total()).to.equal(1);
    first.retarget(node.rpcUrl);
    for (let i = 0; i < 30 && transport.states()[0].status !== "ok"; i++) {
      await transport.send(call("eth_blockNumber")); // keeps the second URL's head fresh
      await sleep(200);
    }
    expect(transport.states()[0].status).to.equal("ok");
  });

  describe("when the only URL in use stops answering", function () {
    // Cooldowns and rechecks far longer than the test: only the read itself can bring the first URL back.
    const patient = () => {
      transport.close();
      transport = new FailoverTransport([first.url, second.url], {
        timeoutMs: TIMEOUT_MS,
        maxLagBlocks: 5,
        cooldownMs: 60_000,
        behindRecheckMs: 60_000,
      });
    };

    it("asks a URL in its cooldown at once, before the read fails, and reads from it once it answers", async function () {
      patient();
      first.mode = "502";
      await transport.send(call("eth_chainId"));
      expect(transport.states().map((u) => u.status)).to.deep.equal(["down", "ok"]);
      first.mode = "forward"; // back, though its cooldown has a minute to run
      second.mode = "hang";
      const answer = (await transport.send(call("eth_chainId"))) as Answer;
      expect(answer.result).to.equal("0x7a69");
      expect(transport.states().map((u) => u.status)).to.deep.equal(["ok", "down"]);
    });

    it("asks a URL marked behind its head at once, and reads from it when it has caught up", async function () {
      patient();
      await transport.send(call("eth_blockNumber")); // the chain's head, from the first URL
      first.retarget(lagging.rpcUrl);
      await transport.send(call("eth_blockNumber"));
      expect(transport.states()[0].status).to.equal("behind");
      first.retarget(node.rpcUrl); // caught up; its recheck is a minute away
      second.mode = "hang";
      const answer = (await transport.send(call("eth_blockNumber"))) as Answer;
      expect(Number(BigInt(answer.result as string))).to.equal(await control.blockNumber());
      expect(transport.states().map((u) => u.status)).to.deep.equal(["ok", "down"]);
    });

    it("still never answers from a URL that is behind", async function () {
      patient();
      await transport.send(call("eth_blockNumber"));
      first.retarget(lagging.rpcUrl);
      await transport.send(call("eth_blockNumber"));
      second.mode = "hang";
      let failed: unknown;
      await transport.send(call("eth_blockNumber")).catch((err: unknown) => (failed = err));
      expect(failed, "a lagging node's head is no answer").to.not.equal(undefined);
      expect(transport.states()[0].status).to.equal("behind");
    });
  });

  it("answers a block a URL lacks, at a height another URL has shown, from that other URL", async function () {
    await transport.send(call("eth_blockNumber"));
    first.answerWith("eth_getBlockByNumber", { result: null });
    const block = (await transport.send(call("eth_getBlockByNumber", ["0x5", false]))) as Answer;
    expect((block.result as { number: string }).number).to.equal("0x5");
  });

  describe("a signed transaction", function () {
    const wallet = new Wallet(DEV_KEYS[7]);
    const sign = async (nonce: number) =>
      wallet.signTransaction({
        type: 2,
        chainId: 31337,
        to: Wallet.createRandom().address,
        value: 1n,
        nonce,
        gasLimit: 21_000,
        maxFeePerGas: 100n * 10n ** 9n,
        maxPriorityFeePerGas: 10n ** 9n,
      });

    beforeEach(async function () {
      await control.setAutomine(false);
    });
    afterEach(async function () {
      await control.mine(1);
      await control.setAutomine(true);
    });

    it("goes to every URL; the second's 'already known' is no error", async function () {
      const raw = await sign(await control.nonce(wallet.address, "pending"));
      first.resetCounts();
      second.resetCounts();
      const answer = (await transport.send(call("eth_sendRawTransaction", [raw]))) as Answer;
      expect(answer.result).to.match(/^0x[0-9a-f]{64}$/);
      await sleep(100);
      expect(first.calls.get("eth_sendRawTransaction")).to.equal(1);
      expect(second.calls.get("eth_sendRawTransaction")).to.equal(1);
    });

    it("is accepted by the second URL while the first hangs, without waiting for the first", async function () {
      first.mode = "hang";
      const raw = await sign(await control.nonce(wallet.address, "pending"));
      const started = performance.now();
      const answer = (await transport.send([call("eth_sendRawTransaction", [raw], 7)])) as Answer[];
      expect(performance.now() - started).to.be.below(TIMEOUT_MS);
      expect(answer[0].result).to.match(/^0x[0-9a-f]{64}$/);
      expect((await control.pendingTransactions()).length).to.equal(1);
    });

    it("is not refused for 'nonce too low' from one URL while the other's answer is lost: it may be ours, mined", async function () {
      const raw = await sign(await control.nonce(wallet.address, "pending"));
      first.refuse("eth_sendRawTransaction", { error: { code: -32000, message: "nonce too low" } });
      second.mode = "reset";
      const answer = (await transport.send([call("eth_sendRawTransaction", [raw], 3)])) as Answer[];
      expect(answer).to.deep.equal([]); // left out: broadcast() reads it as lost, for the follower to settle
    });

    it("is refused when every URL refuses it", async function () {
      const raw = await sign(await control.nonce(wallet.address, "pending"));
      const refusal = { error: { code: -32000, message: "nonce too low" } };
      first.refuse("eth_sendRawTransaction", refusal);
      second.refuse("eth_sendRawTransaction", refusal);
      const answer = (await transport.send(call("eth_sendRawTransaction", [raw]))) as Answer;
      expect(answer.error?.message).to.equal("nonce too low");
    });
  });

  describe("at start (eth_chainId of every URL)", function () {
    it("stops on a URL that answers another chain id, naming it masked", async function () {
      second.answerWith("eth_chainId", { result: "0x1" });
      const other = new FailoverTransport([first.url, `${second.url}/v3/0123456789abcdef0123`], {
        timeoutMs: TIMEOUT_MS,
        maxLagBlocks: 5,
      });
      try {
        const err = await other.checkChainId().then(
          () => null,
          (e: Error) => e,
        );
        expect(err?.message).to.equal(
          `The RPC URL ${second.url}/*** answers chain id 1, not 31337: every URL of a chain must serve that chain`,
        );
      } finally {
        other.close();
      }
    });

    it("with the chain id given, starts though no URL answers; reads fail until a URL answers that id, then go to it", async function () {
      first.mode = "503";
      second.mode = "503";
      const other = new FailoverTransport([first.url, second.url], { timeoutMs: TIMEOUT_MS, maxLagBlocks: 5 });
      try {
        expect(await other.checkChainId(31337n)).to.equal(31337n);
        expect(other.answered).to.equal(false);
        expect(other.states().map((s) => s.status)).to.deep.equal(["down", "down"]);
        const failed = await other.send(call("eth_blockNumber")).then(
          () => null,
          (e: { code?: string }) => e,
        );
        expect(failed?.code).to.equal("SERVER_ERROR");
        first.mode = "forward";
        second.mode = "forward";
        const answer = (await other.send(call("eth_blockNumber"))) as Answer;
        expect(answer.result).to.match(/^0x/);
        expect(other.answered).to.equal(true);
      } finally {
        other.close();
      }
    });

    it("never reads from a URL that did not answer at start and later answers another chain id", async function () {
      second.mode = "503";
      const other = new FailoverTransport([first.url, second.url], { timeoutMs: TIMEOUT_MS, maxLagBlocks: 5 });
      try {
        expect(await other.checkChainId(31337n)).to.equal(31337n);
        second.resetCounts();
        second.mode = "forward";
        second.answerWith("eth_chainId", { result: "0x1" }, { times: Infinity });
        first.mode = "503";
        const failed = await other.send(call("eth_blockNumber")).then(
          () => null,
          (e: Error) => e,
        );
        expect(failed, "the read fails: the only URL answering serves another chain").to.not.equal(null);
        expect(second.calls.get("eth_chainId")).to.be.at.least(1);
        expect(second.calls.get("eth_blockNumber") ?? 0, "nothing read from it").to.equal(0);
        expect(other.states()[1].lastError).to.include("answers chain id 1, not 31337");
      } finally {
        other.close();
      }
    });

    it("without the chain id, asks again through 503s with backoff up to the wait, then names the URLs masked", async function () {
      first.mode = "503";
      second.mode = "503";
      first.resetCounts();
      const other = new FailoverTransport([`${first.url}/v2/abcdefghijklmnop0123`, second.url], {
        timeoutMs: TIMEOUT_MS,
        maxLagBlocks: 5,
      });
      try {
        const started = Date.now();
        const err = await other.checkChainId(undefined, 2_000).then(
          () => null,
          (e: Error) => e,
        );
        expect(Date.now() - started).to.be.at.least(1_000);
        expect(err?.message, err?.message).to.include(
          `No RPC URL of the chain (${first.url}/***, ${second.url}/***) answered eth_chainId within 2000 ms ` +
            "(CHAIN_START_TIMEOUT_MS); the last error: SERVER_ERROR: server response 503",
        );
        expect(first.calls.get("eth_chainId"), "asked again").to.be.at.least(3);
      } finally {
        other.close();
      }
    });

    it("without the chain id, a URL that answers 503 once is asked again and starts", async function () {
      first.failWith("eth_chainId", 503);
      second.failWith("eth_chainId", 503);
      const other = new FailoverTransport([first.url, second.url], { timeoutMs: TIMEOUT_MS, maxLagBlocks: 5 });
      try {
        expect(await other.checkChainId(undefined, 5_000)).to.equal(31337n);
        expect(other.states().map((s) => s.status)).to.deep.equal(["ok", "ok"]);
      } finally {
        other.close();
      }
    });

    it("marks a URL that does not answer down, and starts", async function () {
      first.mode = "reset";
      const other = new FailoverTransport([first.url, second.url], { timeoutMs: TIMEOUT_MS, maxLagBlocks: 5 });
      try {
        expect(await other.checkChainId()).to.equal(31337n);
        expect(other.states().map((s) => s.status)).to.deep.equal(["down", "ok"]);
      } finally {
        other.close();
      }
    });
  });
});
