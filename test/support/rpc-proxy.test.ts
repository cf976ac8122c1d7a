/**
 * The test tooling of test/support against a real `hardhat node` with automine off: RpcProxy's
 * forwarding, latency, counts and faults; ChainControl's helpers; and the node's own answers that the
 * transaction engine relies on (exact error texts of Hardhat 2.29 / EDR).
 */
import { connect as netConnect } from "node:net";
import { expect } from "chai";
import { FetchRequest, JsonRpcProvider, Wallet, keccak256, parseUnits } from "ethers";
import { ChainNode, DEV_KEYS, sleep } from "../api/harness";
import { ChainControl, RpcError } from "./chain-control";
import { GATEWAY_502_BODY, RpcProxy, type LossMode } from "./rpc-proxy";

const CHAIN_ID = 31337;
const SINK = "0x000000000000000000000000000000000000dEaD";
const GWEI = 10n ** 9n;

interface Fees {
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
}

/** A signed 1-wei transfer (EIP-1559), 10 gwei max fee and 1 gwei tip unless told. */
function signTransfer(wallet: Wallet, nonce: number, fees: Fees = {}): Promise<string> {
  return wallet.signTransaction({
    type: 2,
    chainId: CHAIN_ID,
    to: SINK,
    value: 1n,
    nonce,
    gasLimit: 21_000,
    maxFeePerGas: fees.maxFeePerGas ?? 10n * GWEI,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas ?? GWEI,
  });
}

/** An ethers provider through `url` whose requests give up after `timeoutMs`. */
function providerAt(url: string, timeoutMs = 2_000): JsonRpcProvider {
  const request = new FetchRequest(url);
  request.timeout = timeoutMs;
  return new JsonRpcProvider(request, CHAIN_ID, { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: unknown }> {
  try {
    await promise;
  } catch (err) {
    return err as Error & { code?: unknown };
  }
  throw new Error("expected a rejection");
}

/** A raw JSON-RPC POST with fetch. */
function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** Opens a TCP connection to 127.0.0.1:port and closes it. */
function connect(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, "127.0.0.1", () => {
      socket.destroy();
      resolve();
    });
    socket.once("error", reject);
  });
}

/** What ethers 6 throws for each way of losing an answer (the Node error codes pass through). */
const LOSS_SEEN_BY_ETHERS: Record<LossMode, string> = {
  drop: "ECONNRESET", // "socket hang up"
  "502": "SERVER_ERROR", // "server response 502 Bad Gateway"
  timeout: "TIMEOUT", // "request timeout", after FetchRequest.timeout
};

const call = (method: string, params: unknown[] = [], id = 1) => ({ jsonrpc: "2.0", id, method, params });

describe("test support on a hardhat node (automine off)", function () {
  let node: ChainNode;
  let chain: ChainControl;
  let proxy: RpcProxy;
  let viaProxy: JsonRpcProvider;

  before(async function () {
    this.timeout(90_000);
    node = await ChainNode.start();
    chain = new ChainControl(node.rpcUrl);
    await chain.setAutomine(false);
    proxy = await RpcProxy.start(node.rpcUrl);
    viaProxy = providerAt(proxy.url, 1_500);
  });

  afterEach(async function () {
    proxy.latencyMs = 0;
    proxy.clearRules();
    await proxy.up();
  });

  after(async function () {
    this.timeout(30_000);
    viaProxy?.destroy();
    await proxy?.close();
    await node?.stop();
  });

  /** Sends `raw` straight to the node and returns its hash. */
  const sendDirect = (raw: string) => chain.send<string>("eth_sendRawTransaction", [raw]);
  const mempool = async () => (await chain.pendingTransactions()).map((tx) => tx.hash);
  const receipt = (hash: string) =>
    chain.send<{ blockNumber: string; status: string } | null>("eth_getTransactionReceipt", [hash]);
  const nodeError = async (method: string, params: unknown[]) => {
    const err = await rejection(chain.send(method, params));
    expect(err).to.be.instanceOf(RpcError);
    return err as RpcError;
  };

  describe("RpcProxy", function () {
    it("forwards single and batch calls and counts every call per method, with a bounded log", async function () {
      proxy.resetCounts();
      const single = (await (await post(proxy.url, call("eth_chainId"))).json()) as { result: string };
      expect(single.result).to.equal("0x7a69");
      const batch = (await (
        await post(proxy.url, [
          call("eth_blockNumber", [], 1),
          call("eth_chainId", [], 2),
          call("eth_blockNumber", [], 3),
        ])
      ).json()) as { id: number; result: string }[];
      expect(batch.map((a) => a.id)).to.deep.equal([1, 2, 3]);
      expect(batch[1].result).to.equal("0x7a69");
      expect(await viaProxy.getBlockNumber()).to.equal(await chain.blockNumber());

      expect(Object.fromEntries(proxy.calls)).to.deep.equal({ eth_chainId: 2, eth_blockNumber: 3 });
      expect(proxy.total()).to.equal(5);
      expect(proxy.httpRequests).to.equal(3);
      expect(proxy.log).to.deep.equal([
        "eth_chainId",
        "eth_blockNumber",
        "eth_chainId",
        "eth_blockNumber",
        "eth_blockNumber",
      ]);
      proxy.resetCounts();
      expect(proxy.total()).to.equal(0);
      expect(proxy.log).to.deep.equal([]);

      const small = await RpcProxy.start(node.rpcUrl, { logLimit: 2 });
      try {
        await post(small.url, [call("eth_chainId", [], 1), call("eth_blockNumber", [], 2), call("net_version", [], 3)]);
        expect(small.log).to.deep.equal(["eth_blockNumber", "net_version"]);
        expect(small.total()).to.equal(3);
      } finally {
        await small.close();
      }
    });

    it("latencyMs adds about twice its value to a round trip", async function () {
      const roundTrip = async () => {
        const started = performance.now();
        await viaProxy.send("eth_chainId", []);
        return performance.now() - started;
      };
      await roundTrip(); // warm the connections
      const fast = Math.min(await roundTrip(), await roundTrip(), await roundTrip());
      proxy.latencyMs = 150;
      const slow = Math.min(await roundTrip(), await roundTrip(), await roundTrip());
      // The slow round trip itself carries both delays; the fast one may be inflated by a busy machine.
      expect(slow).to.be.at.least(295);
      expect(slow - fast).to.be.at.most(300 + 400);
    });

    for (const mode of ["drop", "502", "timeout"] as const satisfies readonly LossMode[]) {
      it(`loseAnswer("${mode}") forwards the transaction to the node but the client gets no answer`, async function () {
        const wallet = new Wallet(DEV_KEYS[1]);
        const nonce = await chain.nonce(wallet.address, "pending");
        const raw = await signTransfer(wallet, nonce);
        const hash = keccak256(raw);
        const rule = proxy.loseAnswer("eth_sendRawTransaction", { mode });

        const err = await rejection(viaProxy.send("eth_sendRawTransaction", [raw]));
        expect(err.code).to.equal(LOSS_SEEN_BY_ETHERS[mode]);
        await rule.done;
        expect(rule.hits).to.equal(1);
        expect(await mempool()).to.include(hash);
        expect(await chain.nonce(wallet.address, "pending")).to.equal(nonce + 1);

        // The rule is used up: sending it again reaches the node, which knows it already.
        const again = await rejection(viaProxy.send("eth_sendRawTransaction", [raw]));
        expect(again.message).to.include(`Known transaction: ${hash}`);
        expect(again.code).to.equal("UNKNOWN_ERROR"); // ethers 6 has no code for it
        await chain.mine();
        expect((await receipt(hash))?.status).to.equal("0x1");
      });
    }

    it("loseAnswer as plain fetch sees it: a network error, an HTML 502, or nothing", async function () {
      proxy.loseAnswer("eth_blockNumber", { mode: "drop" });
      const dropped = await rejection(post(proxy.url, call("eth_blockNumber")));
      expect(dropped).to.be.instanceOf(TypeError);
      expect(dropped.cause).to.include({ code: "UND_ERR_SOCKET", message: "other side closed" });

      proxy.loseAnswer("eth_blockNumber", { mode: "502" });
      const gateway = await post(proxy.url, call("eth_blockNumber"));
      expect(gateway.status).to.equal(502);
      expect(gateway.headers.get("content-type")).to.equal("text/html");
      expect(await gateway.text()).to.equal(GATEWAY_502_BODY);

      proxy.loseAnswer("eth_blockNumber", { mode: "timeout" });
      const held = await rejection(
        fetch(proxy.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(call("eth_blockNumber")),
          signal: AbortSignal.timeout(500),
        }),
      );
      expect(held.name).to.equal("TimeoutError");
    });

    it("a rule applies to the whole batch holding a matching call", async function () {
      const wallet = new Wallet(DEV_KEYS[2]);
      const nonce = await chain.nonce(wallet.address, "pending");
      const raw = await signTransfer(wallet, nonce);
      proxy.loseAnswer("eth_sendRawTransaction", { mode: "502" });
      const lost = await post(proxy.url, [call("eth_chainId", [], 1), call("eth_sendRawTransaction", [raw], 2)]);
      expect(lost.status).to.equal(502);
      expect(await mempool()).to.include(keccak256(raw));

      const error = { code: -32005, message: "rate limited" };
      proxy.refuse("eth_blockNumber", { error });
      const refused = (await (
        await post(proxy.url, [call("eth_chainId", [], 1), call("eth_blockNumber", [], 2)])
      ).json()) as unknown;
      expect(refused).to.deep.equal([
        { jsonrpc: "2.0", id: 1, error },
        { jsonrpc: "2.0", id: 2, error },
      ]);
      await chain.mine();
    });

    it("refuse answers a JSON-RPC error without forwarding: the node never sees the transaction", async function () {
      const wallet = new Wallet(DEV_KEYS[3]);
      const nonce = await chain.nonce(wallet.address, "pending");
      const raw = await signTransfer(wallet, nonce);
      proxy.resetCounts();
      const rule = proxy.refuse("eth_sendRawTransaction", {
        times: 2,
        error: { code: -32000, message: "nonce too low" },
      });

      const err = await rejection(viaProxy.send("eth_sendRawTransaction", [raw]));
      expect(err.code).to.equal("NONCE_EXPIRED"); // ethers' reading of "nonce too low"
      expect(await chain.nonce(wallet.address, "pending")).to.equal(nonce);
      expect(await chain.send("eth_getTransactionByHash", [keccak256(raw)])).to.equal(null);
      expect(rule.remaining).to.equal(1);
      await rejection(viaProxy.send("eth_sendRawTransaction", [raw]));
      await rule.done;

      // Used up: the third send goes through.
      expect(await viaProxy.send("eth_sendRawTransaction", [raw])).to.equal(keccak256(raw));
      expect(proxy.calls.get("eth_sendRawTransaction")).to.equal(3);

      // A predicate on params picks the calls it applies to.
      proxy.refuse("eth_getBalance", { times: Infinity, when: ([address]) => address === wallet.address });
      await rejection(viaProxy.send("eth_getBalance", [wallet.address, "latest"]));
      expect(await viaProxy.send("eth_getBalance", [SINK, "latest"])).to.match(/^0x/);
      await chain.mine();
    });

    it("down() refuses connections, up() listens again on the same port", async function () {
      const url = proxy.url;
      expect(await viaProxy.getBlockNumber()).to.be.a("number"); // a keep-alive connection is open
      await proxy.down();
      // A client may first see its kept-alive socket closed; a new connection is refused.
      const viaEthers = await rejection(viaProxy.send("eth_chainId", []));
      expect(viaEthers.code).to.be.oneOf(["ECONNREFUSED", "ECONNRESET"]);
      const refused = await rejection(post(url, call("eth_chainId")));
      expect((refused.cause as { code?: string } | undefined)?.code).to.be.oneOf(["ECONNREFUSED", "UND_ERR_SOCKET"]);
      expect(await rejection(connect(proxy.port))).to.include({ code: "ECONNREFUSED" });
      await proxy.up();
      expect(proxy.url).to.equal(url);
      expect(await viaProxy.send("eth_chainId", [])).to.equal("0x7a69");
    });
  });

  describe("ChainControl", function () {
    it("keepBaseFeeAbove holds a transaction back across mine() calls; it is mined once the fee may fall", async function () {
      const wallet = new Wallet(DEV_KEYS[4]);
      const maxFeePerGas = 2n * GWEI;
      const raw = await signTransfer(wallet, await chain.nonce(wallet.address, "pending"), { maxFeePerGas });
      const hash = await sendDirect(raw);

      const release = chain.keepBaseFeeAbove(maxFeePerGas);
      for (let i = 0; i < 3; i++) {
        await chain.mine();
        expect(await chain.baseFee()).to.be.greaterThan(maxFeePerGas);
        expect(await receipt(hash)).to.equal(null);
        expect(await mempool()).to.include(hash);
      }
      await chain.mine(2);
      expect(await receipt(hash)).to.equal(null);
      release();

      await chain.mine(); // (maxFee + 1) * 7/8 < maxFee
      expect(await chain.baseFee()).to.be.lessThanOrEqual(maxFeePerGas);
      expect((await receipt(hash))?.blockNumber).to.equal(`0x${(await chain.blockNumber()).toString(16)}`);
      expect(await mempool()).to.not.include(hash);
    });

    it("setNextBlockBaseFee applies to the next block only; an empty block lowers the base fee by 12.5%", async function () {
      const natural = await chain.baseFee("pending");
      const id = await chain.snapshot();
      await chain.setNextBlockBaseFee(123n * GWEI);
      expect(await chain.revert(id)).to.equal(true);
      expect(await chain.baseFee("pending")).to.equal(natural); // the override is part of the snapshot

      await chain.setNextBlockBaseFee(8n * GWEI);
      expect(await chain.baseFee("pending")).to.equal(8n * GWEI);
      await chain.mine();
      expect(await chain.baseFee()).to.equal(8n * GWEI);
      await chain.mine();
      expect(await chain.baseFee()).to.equal(7n * GWEI);
      await chain.mine(2);
      expect(await chain.baseFee()).to.equal(5_359_375_000n);
    });

    it("dropTransaction removes a pending transaction", async function () {
      const wallet = new Wallet(DEV_KEYS[5]);
      const nonce = await chain.nonce(wallet.address, "pending");
      const hash = await sendDirect(await signTransfer(wallet, nonce));
      expect(await chain.nonce(wallet.address, "pending")).to.equal(nonce + 1);
      expect(await chain.dropTransaction(hash)).to.equal(true);
      expect(await mempool()).to.not.include(hash);
      expect(await chain.nonce(wallet.address, "pending")).to.equal(nonce);
      expect(await chain.send("eth_getTransactionByHash", [hash])).to.equal(null);
      expect(await chain.dropTransaction(hash)).to.equal(false);
      await chain.mine();
      expect(await receipt(hash)).to.equal(null);
    });

    it("revert to a snapshot taken before a transaction was mined puts it back in the mempool", async function () {
      const wallet = new Wallet(DEV_KEYS[6]);
      const hash = await sendDirect(await signTransfer(wallet, await chain.nonce(wallet.address, "pending")));
      const id = await chain.snapshot();
      await chain.mine();
      expect(await receipt(hash)).to.not.equal(null);
      expect(await chain.revert(id)).to.equal(true);
      expect(await receipt(hash)).to.equal(null);
      expect(await mempool()).to.include(hash);
      expect(await chain.send("eth_getTransactionByHash", [hash])).to.include({ blockNumber: null });
      expect(await chain.revert(id)).to.equal(false); // a snapshot is good for one revert

      const before = await chain.snapshot(); // the mempool holds `hash` here
      const later = await sendDirect(await signTransfer(wallet, await chain.nonce(wallet.address, "pending")));
      expect(await chain.revert(before)).to.equal(true);
      expect(await mempool())
        .to.include(hash)
        .and.not.include(later);
      await chain.mine();
      expect(await receipt(hash)).to.not.equal(null);
    });

    it("setIntervalMining mines on its own (automine off), and 0 stops it", async function () {
      const wallet = new Wallet(DEV_KEYS[7]);
      await chain.setIntervalMining(1_000);
      try {
        const hash = await sendDirect(await signTransfer(wallet, await chain.nonce(wallet.address, "pending")));
        const sent = Date.now();
        while ((await receipt(hash)) === null) {
          expect(Date.now() - sent).to.be.below(2_500);
          await sleep(50);
        }
      } finally {
        await chain.setIntervalMining(0);
      }
      const block = await chain.blockNumber();
      await sleep(1_300);
      expect(await chain.blockNumber()).to.equal(block);
    });
  });

  describe("what hardhat node answers (facts the transaction engine relies on)", function () {
    let direct: JsonRpcProvider;
    before(() => (direct = providerAt(node.rpcUrl)));
    after(() => direct?.destroy());
    /** The code ethers 6 gives the node's answer to sending `raw`. */
    const ethersCode = async (raw: string) => (await rejection(direct.send("eth_sendRawTransaction", [raw]))).code;

    it("a nonce gap: rejected with automine on, queued with automine off", async function () {
      const wallet = new Wallet(DEV_KEYS[8]);
      const nonce = await chain.nonce(wallet.address, "pending");
      const gapped = await signTransfer(wallet, nonce + 1);
      await chain.setAutomine(true);
      try {
        const err = await nodeError("eth_sendRawTransaction", [gapped]);
        expect(err.code).to.equal(-32000);
        expect(err.rpcMessage).to.equal(
          `Nonce too high. Expected nonce to be ${nonce} but got ${nonce + 1}. Note that transactions can't be queued when automining.`,
        );
        expect(await ethersCode(gapped)).to.equal("UNKNOWN_ERROR");
        await chain.setNextBlockBaseFee(100n * GWEI);
        const underpriced = await nodeError("eth_sendRawTransaction", [await signTransfer(wallet, nonce)]);
        expect(underpriced.rpcMessage).to.equal(
          "Transaction maxFeePerGas (10000000000) is too low for the next block, which has a baseFeePerGas of 100000000000",
        );
        expect(await ethersCode(await signTransfer(wallet, nonce))).to.equal("UNKNOWN_ERROR");
      } finally {
        await chain.setAutomine(false);
      }
      await chain.setNextBlockBaseFee(GWEI);

      const queued = await sendDirect(gapped);
      expect(await chain.nonce(wallet.address, "pending")).to.equal(nonce);
      expect(await mempool()).to.include(queued);
      expect(await chain.nextBlockTransactions()).to.not.include(queued);
      expect(await chain.send("eth_getTransactionByHash", [queued])).to.include({ blockNumber: null });
      await sendDirect(await signTransfer(wallet, nonce));
      expect(await chain.nonce(wallet.address, "pending")).to.equal(nonce + 2);
      await chain.mine();
      expect(await chain.nonce(wallet.address, "latest")).to.equal(nonce + 2);
    });

    it("the same raw transaction again: Known transaction while pending, nonce too low once mined", async function () {
      const wallet = new Wallet(DEV_KEYS[9]);
      const nonce = await chain.nonce(wallet.address, "pending");
      const raw = await signTransfer(wallet, nonce);
      const hash = await sendDirect(raw);
      const known = await nodeError("eth_sendRawTransaction", [raw]);
      expect([known.code, known.rpcMessage]).to.deep.equal([-32000, `Known transaction: ${hash}`]);
      expect(await ethersCode(raw)).to.equal("UNKNOWN_ERROR");
      expect(await chain.send("eth_getTransactionByHash", [hash])).to.include({
        blockHash: null,
        blockNumber: null,
        transactionIndex: null,
      });
      await chain.mine();
      const mined = await nodeError("eth_sendRawTransaction", [raw]);
      expect(mined.rpcMessage).to.equal(
        `Transaction nonce too low. Expected nonce to be at least ${nonce + 1} but got ${nonce}.`,
      );
      expect(await ethersCode(raw)).to.equal("NONCE_EXPIRED");
    });

    it("a replacement needs +10% on both maxFeePerGas and maxPriorityFeePerGas", async function () {
      const wallet = new Wallet(DEV_KEYS[9]);
      const nonce = await chain.nonce(wallet.address, "pending");
      await sendDirect(await signTransfer(wallet, nonce)); // 10 gwei, 1 gwei tip
      const replace = async (maxFee: string, tip: string) =>
        signTransfer(wallet, nonce, {
          maxFeePerGas: parseUnits(maxFee, "gwei"),
          maxPriorityFeePerGas: parseUnits(tip, "gwei"),
        });
      const needFee = `Replacement transaction underpriced. A gasPrice/maxFeePerGas of at least 11000000000 is necessary to replace the existing transaction with nonce ${nonce}.`;
      const needTip = `Replacement transaction underpriced. A gasPrice/maxPriorityFeePerGas of at least 1100000000 is necessary to replace the existing transaction with nonce ${nonce}.`;
      expect((await nodeError("eth_sendRawTransaction", [await replace("10.5", "1.05")])).rpcMessage).to.equal(needFee);
      expect((await nodeError("eth_sendRawTransaction", [await replace("10.999", "1.1")])).rpcMessage).to.equal(
        needFee,
      );
      expect((await nodeError("eth_sendRawTransaction", [await replace("11", "1")])).rpcMessage).to.equal(needTip);
      expect(await ethersCode(await replace("11", "1"))).to.equal("REPLACEMENT_UNDERPRICED");
      const replacement = await sendDirect(await replace("11", "1.1"));
      expect(await mempool()).to.include(replacement);
      await chain.mine();
      expect((await receipt(replacement))?.status).to.equal("0x1");
    });

    it("unsupported: eth_getBlockReceipts, txpool_content", async function () {
      for (const [method, params] of [
        ["eth_getBlockReceipts", ["latest"]],
        ["txpool_content", []],
      ] as const) {
        const err = await nodeError(method, [...params]);
        expect([err.code, err.rpcMessage]).to.deep.equal([-32004, `Method ${method} is not supported`]);
      }
    });
  });
});
