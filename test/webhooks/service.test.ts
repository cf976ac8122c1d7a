/**
 * Webhooks of the service as users run it (npm start's command, PGlite, a `hardhat node` with
 * automine off), to a receiver in this process: a 202 mint produces operation.sent then
 * operation.confirmed, each verified by standardwebhooks' own Webhook.verify; and an event not
 * yet delivered when the service is SIGKILLed arrives after a restart on the same data.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Webhook } from "standardwebhooks";
import {
  ApiClient,
  ChainNode,
  deployWithScript,
  directProvider,
  fundedWallet,
  leakedSecrets,
  ServiceProcess,
  TEST_API_KEY,
  usedSecrets,
  type JsonBody,
} from "../api/harness";
import { ChainControl } from "../support/chain-control";
import { Receiver } from "./receiver";

const ROOT = { authorization: `Bearer ${TEST_API_KEY}` };

describe("webhooks of the service (PGlite, a real chain)", function () {
  let node: ChainNode;
  let chain: ChainControl;
  let collection: string;
  let service: ServiceProcess;
  let api: ApiClient;
  let receiver: Receiver;
  const dataDir = mkdtempSync(path.join(tmpdir(), "webhooks-service-"));
  const env = { DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: "true", TX_TIMEOUT_MS: "1000", BLOCK_POLL_MS: "100" };
  let minterKey: string;
  const outputs: string[] = [];

  before(async function () {
    this.timeout(120_000);
    node = await ChainNode.start();
    collection = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "100000" });
    chain = new ChainControl(node.rpcUrl);
    const provider = directProvider(node.rpcUrl);
    minterKey = (await fundedWallet(provider)).privateKey;
    provider.destroy();
    [service, receiver] = await Promise.all([ServiceProcess.start({ rpcUrl: node.rpcUrl, env }), Receiver.start()]);
    api = new ApiClient(service.url);
  });

  after(async function () {
    this.timeout(30_000);
    await service?.stop();
    await receiver?.close();
    await node?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("a 202 mint produces operation.sent then operation.confirmed, each verified with Webhook.verify; a tampered body fails it", async function () {
    this.timeout(60_000);
    const made = await api.request("POST", "/webhooks", {
      json: { url: receiver.url, events: ["operation.sent", "operation.confirmed"], collections: [collection] },
      headers: ROOT,
    });
    expect(made.status, made.text).to.equal(201);
    usedSecrets.add(made.body.secret as string);
    await chain.setAutomine(false);
    const mint = await api.post("/nft/mint", { privateKey: minterKey, contractAddress: collection, mintAmount: 2 });
    expect(mint.status, mint.text).to.equal(202);
    const id = mint.body.operationId as string;
    await receiver.until((d) => d.some((x) => x.json.type === "operation.sent" && x.json.data.operationId === id));
    await chain.mine();
    await chain.setAutomine(true);
    await receiver.until((d) => d.some((x) => x.json.type === "operation.confirmed" && x.json.data.operationId === id));

    const mine = receiver.deliveries.filter((d) => d.json.data.operationId === id);
    expect(mine.map((d) => d.json.type)).to.deep.equal(["operation.sent", "operation.confirmed"]);
    const webhook = new Webhook(made.body.secret as string);
    for (const delivery of mine) {
      expect(webhook.verify(delivery.body, delivery.headers)).to.deep.equal(delivery.json);
      const tampered = delivery.body.replace(`"${id}"`, `"${id.replace(/.$/, (c) => (c === "0" ? "1" : "0"))}"`);
      expect(tampered).not.to.equal(delivery.body);
      expect(() => webhook.verify(tampered, delivery.headers)).to.throw();
    }
    expect(new Set(mine.map((d) => d.id)).size, "one webhook-id per event").to.equal(2);
    const [sent, confirmed] = mine.map((d) => d.json);
    expect(sent.data).to.include({
      operationId: id,
      operation: "mint",
      status: "sent",
      transactionHash: mint.body.transactionHash,
    });
    const now = (await api.get(`/nft/operations/${id}`)).body;
    expect(now.status).to.equal("confirmed");
    // The event's data is the operation as GET /nft/operations/{id} shows it.
    for (const field of [
      "operationId",
      "operation",
      "status",
      "from",
      "contractAddress",
      "nonce",
      "transactionHash",
      "transactionHashes",
      "blockNumber",
      "result",
      "createdAt",
    ])
      expect(confirmed.data[field], field).to.deep.equal(now[field]);
    expect((confirmed.data.result as JsonBody).tokenIds).to.have.length(2);
    expect(Date.parse(confirmed.timestamp)).to.be.closeTo(Date.now(), 30_000);
  });

  it("SIGKILL after a mint confirms and before its delivery (the receiver holds it), then a restart: the event arrives, same webhook-id", async function () {
    this.timeout(120_000);
    receiver.answerWith((d) => (d.json.type === "operation.confirmed" ? "hold" : 200));
    const mint = await api.post("/nft/mint", { privateKey: minterKey, contractAddress: collection, mintAmount: 1 });
    expect(mint.status, mint.text).to.equal(200);
    const id = mint.body.operationId as string;
    const [held] = (
      await receiver.until((d) =>
        d.some((x) => x.json.type === "operation.confirmed" && x.json.data.operationId === id),
      )
    ).filter((x) => x.json.type === "operation.confirmed" && x.json.data.operationId === id);

    await service.kill();
    outputs.push(service.output());
    receiver.answerWith(() => 200);
    const before = receiver.deliveries.length;
    service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
    api = new ApiClient(service.url);
    const again = await receiver.until(
      (d) => d.slice(before).some((x) => x.id === held.id),
      30_000,
      "the held operation.confirmed after the restart",
    );
    const redelivered = again.slice(before).find((x) => x.id === held.id)!;
    expect(redelivered.body, "the same bytes").to.equal(held.body);
  });

  it("leaks no secret: no endpoint secret, key or API key in any answer or log line", function () {
    expect(leakedSecrets(api.responseTexts.slice(1).join("\n"))).to.deep.equal([]);
    expect(leakedSecrets([...outputs, service.output()].join("\n"))).to.deep.equal([]);
  });
});
