/**
 * The embedded chain reached in process: the provider that calls Hardhat's network directly must
 * answer what the same network answers over its JSON-RPC port, failures included; and `npm start`
 * with no configuration must use it (no connection from the service to its own chain port).
 */
import { expect } from "chai";
import hre from "hardhat";
import { TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import type { JsonRpcServer } from "hardhat/types";
import { isError, Wallet, type JsonRpcProvider } from "ethers";
import { toChainApiError } from "../../server/chain/chain-errors";
import { collectionInterface, DEFAULT_COLLECTION, deployTransaction } from "../../server/chain/collection";
import { connectInProcess } from "../../server/chain/in-process-provider";
import { connectProvider } from "../../server/chain/provider";
import { ApiClient, DEV_KEYS, ServiceProcess, sleep } from "../api/harness";
import { childrenOf, connectionRefused, establishedConnections, eventually, processGroup } from "./processes";

describe("the in-process provider (embedded chain without HTTP loopback)", function () {
  let snapshot: string;
  let server: JsonRpcServer;
  let inProcess: JsonRpcProvider;
  let overHttp: JsonRpcProvider;
  let collection: string;
  const iface = collectionInterface();

  before(async function () {
    snapshot = (await hre.network.provider.request({ method: "evm_snapshot" })) as string;
    server = (await hre.run(TASK_NODE_CREATE_SERVER, {
      hostname: "127.0.0.1",
      port: 0,
      provider: hre.network.provider,
    })) as JsonRpcServer;
    const { port } = await server.listen();
    ({ provider: inProcess } = await connectInProcess(hre.network.provider));
    ({ provider: overHttp } = await connectProvider(`http://127.0.0.1:${port}`, 10_000));
    const owner = new Wallet(DEV_KEYS[0], inProcess);
    const deployed = await (await owner.sendTransaction(await deployTransaction(DEFAULT_COLLECTION))).wait();
    collection = deployed!.contractAddress!;
    const minted = await owner.sendTransaction({
      to: collection,
      data: iface.encodeFunctionData("mintForFree", [2, owner.address]),
    });
    if ((await minted.wait())?.status !== 1) throw new Error("mintForFree did not confirm");
  });

  after(async function () {
    inProcess?.destroy();
    overHttp?.destroy();
    await server?.close();
    await hre.network.provider.request({ method: "evm_revert", params: [snapshot] });
  });

  it("reads the same chain as the JSON-RPC port: chain id, block, code, a view call", async function () {
    const call = { to: collection, data: iface.encodeFunctionData("tokenURI", [2]) };
    expect((await inProcess.getNetwork()).chainId).to.equal(31337n);
    expect(await inProcess.getBlockNumber()).to.equal(await overHttp.getBlockNumber());
    expect(await inProcess.getCode(collection)).to.equal(await overHttp.getCode(collection));
    const [a, b] = [await inProcess.call(call), await overHttp.call(call)];
    expect(a).to.equal(b);
    expect(iface.decodeFunctionResult("tokenURI", a)[0]).to.equal(`${DEFAULT_COLLECTION.baseURI}2.json`);
  });

  /** The error of `run` on each provider, side by side. */
  async function bothFail(run: (p: JsonRpcProvider) => Promise<unknown>) {
    const failure = async (p: JsonRpcProvider) => {
      try {
        await run(p);
      } catch (err) {
        return err;
      }
      throw new Error("the call did not fail");
    };
    return { inProcess: await failure(inProcess), overHttp: await failure(overHttp) };
  }

  it("reports a revert as over JSON-RPC: CALL_EXCEPTION with the same revert data, the same API error", async function () {
    const errors = await bothFail((p) => p.call({ to: collection, data: iface.encodeFunctionData("tokenURI", [999]) }));
    for (const err of [errors.inProcess, errors.overHttp])
      expect(isError(err, "CALL_EXCEPTION"), String(err)).to.be.true;
    const data = (err: unknown) => (err as { data?: string }).data;
    expect(data(errors.inProcess)).to.be.a("string").and.not.equal("0x");
    expect(data(errors.inProcess)).to.equal(data(errors.overHttp));
    expect(toChainApiError(errors.inProcess, "UNSUPPORTED_CONTRACT").code).to.equal("TOKEN_NOT_FOUND");
    expect(toChainApiError(errors.overHttp, "UNSUPPORTED_CONTRACT").code).to.equal("TOKEN_NOT_FOUND");
  });

  it("reports a failing estimate (mint by a caller who cannot pay) with the same API error", async function () {
    const from = "0x000000000000000000000000000000000000dEaD";
    const errors = await bothFail((p) =>
      p.estimateGas({ from, to: collection, data: iface.encodeFunctionData("mint", [1]), value: 1n }),
    );
    const codes = [errors.inProcess, errors.overHttp].map((err) => toChainApiError(err).code);
    expect(codes[0]).to.equal(codes[1]);
    expect(codes[0]).to.not.equal("CHAIN_UNAVAILABLE");
  });

  it("reports a JSON-RPC error of the node (unknown method) with the same code and message", async function () {
    const errors = await bothFail((p) => p.send("eth_noSuchMethod", []));
    const shape = (err: unknown) => {
      const e = err as { error?: { code?: number; message?: string } };
      return { code: e.error?.code, message: e.error?.message };
    };
    expect(shape(errors.inProcess)).to.deep.equal(shape(errors.overHttp));
    expect(shape(errors.inProcess).code).to.be.a("number");
  });
});

describe("npm start with no configuration: the service and its embedded chain in one process", function () {
  let service: ServiceProcess;
  let api: ApiClient;
  let contractAddress: string;

  before(async function () {
    this.timeout(120_000);
    service = await ServiceProcess.start({});
    await eventually("the banner", 60_000, () => /^\s+Contract\s+0x/m.test(service.output()));
    contractAddress = /^\s+Contract\s+(0x[0-9a-fA-F]{40})/m.exec(service.output())![1];
    api = new ApiClient(service.url);
  });

  after(async function () {
    this.timeout(30_000);
    await service?.stop();
  });

  it("mints and reads without one connection from the service to its own JSON-RPC port", async function () {
    const mint = await api.post("/nft/mint", { privateKey: DEV_KEYS[1], contractAddress, mintAmount: 2 });
    expect(mint.status, mint.text).to.equal(200);
    const read = await api.post("/nft/tokenURI", { privateKey: DEV_KEYS[1], contractAddress, tokenId: "2" });
    expect(read.status, read.text).to.equal(200);
    expect(establishedConnections(service.chainPort!)).to.equal(0);
    expect(await connectionRefused(service.chainPort!), "the JSON-RPC port is still served").to.equal(false);
  });

  it("counts its in-process JSON-RPC calls in /metrics (the deployment and the mint among them)", async function () {
    const metrics = await api.get("/metrics");
    const sends = /^rpc_calls_total\{method="eth_sendRawTransaction",chain="31337"\} (\d+)$/m.exec(metrics.text);
    expect(Number(sends?.[1])).to.be.at.least(2);
    expect(metrics.text).to.match(/^rpc_call_duration_seconds_count\{method="eth_call",chain="31337"\} [1-9]/m);
  });

  it("is one process, and SIGINT closes the API and the JSON-RPC port and exits 0", async function () {
    this.timeout(30_000);
    expect(childrenOf(service.pid)).to.deep.equal([]);
    service.signal("SIGINT");
    expect(await service.exited()).to.deep.equal({ code: 0, signal: null });
    expect(await connectionRefused(Number(new URL(service.url).port))).to.equal(true);
    expect(await connectionRefused(service.chainPort!)).to.equal(true);
    await sleep(100);
    expect(processGroup(service.pid)).to.deep.equal([]);
  });
});
