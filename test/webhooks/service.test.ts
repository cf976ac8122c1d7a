/**
 * Webhooks of the service as users run it (npm start's command, PGlite, a `hardhat node` with
 * automine off), to a receiver in this process: a 202 mint produces operation.sent then
 * operation.confirmed, each verified by standardwebhooks' own Webhook.verify; an event not yet
 * delivered when the service is SIGKILLed arrives after a restart on the same data; and a
 * collection.transfer mined while the service was down arrives after the restart too.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Webhook } from "standardwebhooks";
import { Wallet, ZeroAddress } from "ethers";
import { LIVE_WINDOW } from "../../server/collections";
import {
  ApiClient,
  ChainNode,
  freshWallet,
  collectionAt,
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
import { deployToken, signCheckout } from "../api/nft/checkout-helpers";
import { Receiver, type Delivery } from "./receiver";

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

  it("mintWithPermit (Checkout): operation.confirmed carries the buyer, the value in token units and the paymentToken", async function () {
    this.timeout(60_000);
    const provider = directProvider(node.rpcUrl);
    try {
      const owner = (await fundedWallet(provider)).connect(provider);
      usedSecrets.add(owner.privateKey);
      const tusd = await deployToken(owner, "TestUSD");
      const token = await tusd.getAddress();
      const deployed = await api.post("/nft/deploy", { privateKey: owner.privateKey, cost: "2500000" });
      expect(deployed.status, deployed.text).to.equal(201);
      const priced = deployed.body.contractAddress as string;
      const set = await api.post("/nft/setPaymentToken", {
        privateKey: owner.privateKey,
        contractAddress: priced,
        paymentToken: token,
      });
      expect(set.status, set.text).to.equal(200);
      const buyer = freshWallet();
      await (await tusd.getFunction("mint")(buyer.address, 10_000_000n)).wait();
      const made = await api.request("POST", "/webhooks", {
        json: { url: receiver.url, events: ["operation.confirmed"], collections: [priced] },
        headers: ROOT,
      });
      expect(made.status, made.text).to.equal(201);
      usedSecrets.add(made.body.secret as string);

      const typed = await api.post("/nft/checkout", { contractAddress: priced, buyer: buyer.address, mintAmount: 2 });
      expect(typed.status, typed.text).to.equal(200);
      const minted = await api.post("/nft/mintWithPermit", {
        privateKey: minterKey,
        contractAddress: priced,
        buyer: buyer.address,
        mintAmount: 2,
        deadline: typed.body.message.deadline,
        signature: await signCheckout(buyer, typed.body),
      });
      expect(minted.status, minted.text).to.be.oneOf([200, 202]);
      const id = minted.body.operationId as string;
      const events = await receiver.until((d) =>
        d.some((x) => x.json.type === "operation.confirmed" && x.json.data.operationId === id),
      );
      const confirmed = events.find((x) => x.json.type === "operation.confirmed" && x.json.data.operationId === id)!;
      expect(confirmed.json.data.operation).to.equal("mintWithPermit");
      const result = confirmed.json.data.result as JsonBody;
      expect(result).to.include({ buyer: buyer.address, value: "5000000" });
      expect(result.paymentToken).to.deep.include({ address: token, symbol: "TUSD", decimals: 6 });
      expect(result.tokenIds).to.have.length(2);
    } finally {
      provider.destroy();
    }
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

  it("collection.transfer: a mint's transfer arrives once final, and so does one mined while the service was down for longer than the index's live window", async function () {
    this.timeout(120_000);
    const made = await api.request("POST", "/webhooks", {
      json: { url: receiver.url, events: ["collection.transfer"], collections: [collection] },
      headers: ROOT,
    });
    expect(made.status, made.text).to.equal(201);
    usedSecrets.add(made.body.secret as string);
    const transferOf = (hash: string) => (d: Delivery[]) =>
      d.some((x) => x.json.type === "collection.transfer" && x.json.data.transactionHash === hash);
    const mint = await api.post("/nft/mint", { privateKey: minterKey, contractAddress: collection, mintAmount: 1 });
    expect(mint.status, mint.text).to.equal(200);
    await receiver.until(transferOf(mint.body.transactionHash as string), 30_000, "the live transfer");

    await service.kill();
    outputs.push(service.output());
    const provider = directProvider(node.rpcUrl);
    const nft = collectionAt(collection, new Wallet(minterKey, provider));
    const receipt = await (await nft.mint(1, { value: await nft.cost() })).wait();
    await chain.mine(LIVE_WINDOW + 10);
    provider.destroy();
    service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
    api = new ApiClient(service.url);
    const [missed] = (await receiver.until(transferOf(receipt!.hash), 60_000, "the transfer mined while down")).filter(
      (x) => x.json.type === "collection.transfer" && x.json.data.transactionHash === receipt!.hash,
    );
    expect(missed.json.data).to.include({ from: ZeroAddress, to: new Wallet(minterKey).address });
    expect(missed.json.data.blockNumber).to.equal(receipt!.blockNumber);
  });

  it("leaks no secret: no endpoint secret, key or API key in any answer or log line", function () {
    expect(leakedSecrets(api.responseTexts.slice(1).join("\n"))).to.deep.equal([]);
    expect(leakedSecrets([...outputs, service.output()].join("\n"))).to.deep.equal([]);
  });
});
