/**
 * A node with a `finalized` block behind its head (anvil: 64 blocks, as a public chain trails by an
 * epoch or two): an operation is final once that block passes its own, and the follower asks for
 * it only once it may have: not once a block while the operation waits.
 */
import { expect } from "chai";
import { AnvilNode, ApiClient, ServiceProcess, deployDirectly, directProvider, fundedWallet } from "../api/harness";
import { RpcProxy } from "../support/rpc-proxy";

describe("finality by the node's finalized block (anvil)", function () {
  let node: AnvilNode;
  let proxy: RpcProxy;
  let service: ServiceProcess;
  let api: ApiClient;
  const provider = () => directProvider(node.rpcUrl);
  /** eth_getBlockByNumber("finalized") calls the service made since the counter was last read. */
  let finalizedAsks = 0;

  before(async function () {
    this.timeout(120_000);
    node = await AnvilNode.start();
    proxy = await RpcProxy.start(node.rpcUrl);
    proxy.judgeAnswers("eth_getBlockByNumber", (params) => {
      if (params[0] === "finalized") finalizedAsks++;
      return undefined;
    });
    service = await ServiceProcess.start({ rpcUrl: proxy.url });
    api = new ApiClient(service.url);
  });

  after(async function () {
    this.timeout(30_000);
    await service?.stop();
    await proxy?.close();
    await node?.stop();
  });

  it("a mint is final once the node's finalized block passes it; meanwhile the finalized block is not asked a block", async function () {
    this.timeout(90_000);
    const chain = provider();
    await chain.send("anvil_mine", ["0x50"]); // older than the node's lag: its finalized block is not genesis
    const owner = await fundedWallet(chain);
    const collection = await deployDirectly(owner.connect(chain));
    const res = await api.post("/nft/mint", {
      privateKey: owner.privateKey,
      contractAddress: collection,
      mintAmount: 1,
    });
    expect(res.status, res.text).to.equal(200);
    const id = res.body.operationId as string;
    expect((await api.get(`/nft/operations/${id}`)).body.final).to.equal(false);

    // 30 blocks, each seen by the service's polls: the mint's block is not 64 deep yet.
    finalizedAsks = 0;
    const headBefore = await chain.getBlockNumber();
    for (let i = 0; i < 30; i++) {
      await chain.send("anvil_mine", ["0x1"]);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(await chain.getBlockNumber()).to.equal(headBefore + 30);
    expect(finalizedAsks, "finalized asked while the mint could not be final").to.be.at.most(2);
    expect((await api.get(`/nft/operations/${id}`)).body.final).to.equal(false);

    // Past the node's lag: the next head makes it final.
    await chain.send("anvil_mine", ["0x28"]);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const op = await api.get(`/nft/operations/${id}`);
      if (op.body.final === true) break;
      if (Date.now() > deadline) throw new Error(`not final: ${op.text}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(finalizedAsks).to.be.greaterThan(0);
    chain.destroy();
  });
});
