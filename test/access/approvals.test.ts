/**
 * Approvals end to end (API.md, "Approvals"), on a real automining `hardhat node` and the service
 * on PGlite: a key's rule holds a write (202 awaiting_approval, no nonce taken, its Idempotency-Key
 * answering the same while it waits); GET /approvals; approve by another key sends it (once, even
 * for two approvals at once), reject fails it with APPROVAL_REJECTED, expiry with APPROVAL_EXPIRED;
 * the rule on keys made by keys; the webhook events and the audit event of a decision.
 */
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { Wallet, type JsonRpcProvider } from "ethers";
import { expectError } from "../api/expectations";
import {
  ChainNode,
  collectionAt,
  deployDirectly,
  directProvider,
  fundedWallet,
  ServiceProcess,
  usedSecrets,
  type ApiResponse,
} from "../api/harness";
import { Receiver } from "../webhooks/receiver";
import { AccessClient, bearer, ROOT, type MadeKey } from "./fixture";

describe("Approvals (PGlite, a real node)", function () {
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let service: ServiceProcess;
  let api: AccessClient;
  /** Owns the collection; a wallet the service holds (label "owner"). */
  let owner: Wallet;
  let collection: string;
  /** nft:configure, nft:mintForFree, nft:read and approvals:decide; its setCost and mints above 5 wait. */
  let agent: MadeKey;
  /** approvals:decide alone. */
  let boss: MadeKey;
  let boss2: MadeKey;
  /** Takes approval.requested and approval.decided. */
  let receiver: Receiver;

  before(async function () {
    this.timeout(180_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    const masterKey = randomBytes(32).toString("hex");
    usedSecrets.add(masterKey);
    const started = ServiceProcess.start({
      rpcUrl: node.rpcUrl,
      env: { WALLET_MASTER_KEY: masterKey, TX_TIMEOUT_MS: "30000", WEBHOOK_ALLOW_PRIVATE: "true" },
    });
    receiver = await Receiver.start();
    owner = await fundedWallet(provider);
    usedSecrets.add(owner.privateKey);
    collection = await deployDirectly(owner.connect(provider));
    service = await started;
    api = new AccessClient(service.url);
    const held = await api.post("/wallets", { kind: "local", label: "owner", privateKey: owner.privateKey }, ROOT);
    expect(held.status, held.text).to.equal(201);
    agent = await api.makeKey({
      name: "agent",
      scopes: ["nft:configure", "nft:mintForFree", "nft:read", "approvals:decide"],
      approval: { operations: ["setCost"], mintAmountAbove: 5 },
    });
    boss = await api.makeKey({ name: "boss", scopes: ["approvals:decide"] });
    boss2 = await api.makeKey({ name: "boss2", scopes: ["approvals:decide"] });
    const endpoint = await api.post(
      "/webhooks",
      { url: receiver.url, events: ["approval.requested", "approval.decided"] },
      ROOT,
    );
    expect(endpoint.status, endpoint.text).to.equal(201);
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await node?.stop();
    await receiver?.close();
  });

  const as = (key: MadeKey) => bearer(key.key);
  const setCost = (cost: bigint, idempotencyKey?: string) =>
    api.post(
      "/nft/setCost",
      { from: "owner", contractAddress: collection, cost: cost.toString() },
      { ...as(agent), ...(idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {}) },
    );
  const approve = (id: string, key: MadeKey) => api.post(`/approvals/${id}/approve`, {}, as(key));
  const nonce = () => provider.getTransactionCount(owner.address);
  const cost = async () => (await collectionAt(collection, provider).cost()) as bigint;

  function expectAwaiting(res: ApiResponse, operation: string): void {
    expect(res.status, res.text).to.equal(202);
    expect(res.body.status).to.equal("awaiting_approval");
    expect(res.body.operationId).to.be.a("string");
    expect(res.body.approvalId).to.match(/^apr_/);
    expect(res.body.plan.operation).to.equal(operation);
    expect(res.body.plan.collection.toLowerCase()).to.equal(collection.toLowerCase());
    expect(res.body.plan.call.from).to.equal(owner.address);
    expect(res.body.plan.chain.id).to.equal("31337");
    expect(res.body.plan.requestedBy).to.deep.equal({ keyId: agent.id, name: "agent" });
  }

  it("the rule is kept on the key and listed; a key made by a key inherits it, and a looser one is 403", async function () {
    expect(agent.body.approval).to.deep.equal({ operations: ["setCost"], mintAmountAbove: 5 });
    const listed = await api.getAs("/access-keys", ROOT);
    const found = (listed.body.accessKeys as Array<Record<string, unknown>>).find((k) => k.id === agent.id);
    expect(found?.approval).to.deep.equal({ operations: ["setCost"], mintAmountAbove: 5 });

    const maker = await api.makeKey({
      name: "maker",
      scopes: ["access-keys:manage", "nft:read"],
      approval: { operations: ["withdraw"], valueAbove: "100" },
    });
    const inherited = await api.makeKey({ name: "child", scopes: ["nft:read"] }, as(maker));
    expect(inherited.body.approval).to.deep.equal({ operations: ["withdraw"], valueAbove: "100" });
    const stricter = await api.makeKey(
      { name: "stricter", scopes: ["nft:read"], approval: { operations: ["withdraw", "setCost"], valueAbove: "50" } },
      as(maker),
    );
    expect(stricter.body.approval.valueAbove).to.equal("50");
    for (const approval of [
      { operations: [], valueAbove: "100" },
      { operations: ["withdraw"], valueAbove: "101" },
    ]) {
      const res = await api.post("/access-keys", { name: "looser", scopes: ["nft:read"], approval }, as(maker));
      expectError(res, 403, "FORBIDDEN");
      expect(res.body.error.details[0].path).to.equal("approval");
    }
  });

  describe("a held setCost", function () {
    let held: ApiResponse;
    let nonceBefore: number;
    const newCost = 12_345n;

    before(async function () {
      this.timeout(60_000);
      nonceBefore = await nonce();
      held = await setCost(newCost, "cost-1");
    });

    it("answers 202 awaiting_approval with its plan: nothing signed, the owner's nonce unchanged", async function () {
      expectAwaiting(held, "setCost");
      expect(await nonce()).to.equal(nonceBefore);
      const op = await api.getAs(`/nft/operations/${held.body.operationId}`, as(agent));
      expect(op.status, op.text).to.equal(200);
      expect(op.body.status).to.equal("awaiting_approval");
      expect(op.body.transactionHashes).to.deep.equal([]);
    });

    it("a repeat of its Idempotency-Key answers the same 202 awaiting_approval", async function () {
      const again = await setCost(newCost, "cost-1");
      expect(again.status, again.text).to.equal(202);
      expect(again.body).to.deep.equal(held.body);
      expect(again.headers.get("idempotent-replayed")).to.equal("true");
      expect(await nonce()).to.equal(nonceBefore);
    });

    it("GET /approvals lists it, pending, newest first, with who asked", async function () {
      const res = await api.getAs("/approvals?status=pending", as(boss));
      expect(res.status, res.text).to.equal(200);
      const [first] = res.body.approvals;
      expect(first.id).to.equal(held.body.approvalId);
      expect(first.status).to.equal("pending");
      expect(first.operationId).to.equal(held.body.operationId);
      expect(first.requestedBy).to.deep.equal({ keyId: agent.id, name: "agent" });
      const noScope = await api.getAs("/approvals", as(await api.makeKey({ scopes: ["nft:read"] })));
      expectError(noScope, 403, "FORBIDDEN");
    });

    it("the key that asked cannot approve it (403), even holding approvals:decide", async function () {
      expectError(await approve(held.body.approvalId, agent), 403, "FORBIDDEN");
      expect(await nonce()).to.equal(nonceBefore);
    });

    it("another key approves: sent as if just arrived, cost changed on chain, operation confirmed; a second approve is 409", async function () {
      this.timeout(60_000);
      const res = await approve(held.body.approvalId, boss);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.status).to.equal("confirmed");
      expect(res.body.operationId).to.equal(held.body.operationId);
      expect(await cost()).to.equal(newCost);
      expect(await nonce()).to.equal(nonceBefore + 1);
      const op = await api.getAs(`/nft/operations/${held.body.operationId}`, as(agent));
      expect(op.body.status).to.equal("confirmed");
      expectError(await approve(held.body.approvalId, boss2), 409, "APPROVAL_NOT_PENDING");
      const listed = await api.getAs("/approvals?status=approved", as(boss));
      expect(listed.body.approvals[0].decidedBy).to.deep.equal({ keyId: boss.id, name: "boss" });
      const audit = await api.getAs("/audit-events", ROOT);
      const decision = (audit.body.auditEvents as Array<Record<string, unknown>>).find(
        (e) => e.action === "approval.approved" && e.targetId === held.body.approvalId,
      );
      expect(decision?.keyId).to.equal(boss.id);
      const events = await receiver.until((all) =>
        all.some((d) => d.json.type === "approval.decided" && d.json.data.id === held.body.approvalId),
      );
      const requested = events.find(
        (d) => d.json.type === "approval.requested" && d.json.data.id === held.body.approvalId,
      );
      expect(requested?.json.data.status).to.equal("pending");
      const decided = events.find((d) => d.json.type === "approval.decided" && d.json.data.id === held.body.approvalId);
      expect(decided?.json.data.status).to.equal("approved");
      // Once sent, its Idempotency-Key answers as any write's.
      const replay = await setCost(newCost, "cost-1");
      expect(replay.status, replay.text).to.equal(200);
      expect(replay.body.status).to.equal("confirmed");
    });
  });

  it("reject: the operation fails with APPROVAL_REJECTED and the reason; nothing is sent", async function () {
    this.timeout(60_000);
    const nonceBefore = await nonce();
    const held = await setCost(777n, "cost-rejected");
    expectAwaiting(held, "setCost");
    const res = await api.post(`/approvals/${held.body.approvalId}/reject`, { reason: "not agreed" }, as(boss));
    expect(res.status, res.text).to.equal(200);
    expect(res.body.status).to.equal("rejected");
    expect(res.body.reason).to.equal("not agreed");
    const op = await api.getAs(`/nft/operations/${held.body.operationId}`, as(agent));
    expect(op.body.status).to.equal("failed");
    expect(op.body.error.code).to.equal("APPROVAL_REJECTED");
    expect(op.body.error.message).to.include("not agreed");
    expectError(await setCost(777n, "cost-rejected"), 409, "APPROVAL_REJECTED");
    expectError(await approve(held.body.approvalId, boss), 409, "APPROVAL_NOT_PENDING");
    expect(await nonce()).to.equal(nonceBefore);
    expect(await cost()).to.not.equal(777n);
  });

  it("mintAmountAbove: a mint above it waits, one at or below it is sent at once", async function () {
    this.timeout(60_000);
    const mint = (mintAmount: number) =>
      api.post("/nft/mintForFree", { from: "owner", contractAddress: collection, mintAmount }, as(agent));
    const nonceBefore = await nonce();
    expectAwaiting(await mint(6), "mintForFree");
    expect(await nonce()).to.equal(nonceBefore);
    const small = await mint(5);
    expect(small.status, small.text).to.equal(200);
    expect(small.body.status).to.equal("confirmed");
    expect(await nonce()).to.equal(nonceBefore + 1);
  });

  it("two approvals of one id at once send one transaction: one answers the write, the other 409", async function () {
    this.timeout(60_000);
    const held = await setCost(4_242n);
    expectAwaiting(held, "setCost");
    const nonceBefore = await nonce();
    const answers = await Promise.all([approve(held.body.approvalId, boss), approve(held.body.approvalId, boss2)]);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses, answers.map((a) => a.text).join("\n")).to.deep.equal([200, 409]);
    expect(answers.find((a) => a.status === 409)!.body.error.code).to.equal("APPROVAL_NOT_PENDING");
    expect(await cost()).to.equal(4_242n);
    expect(await nonce()).to.equal(nonceBefore + 1);
  });

  it("undecided past APPROVAL_TTL_HOURS: expired, its operation failed with APPROVAL_EXPIRED, approve 409", async function () {
    this.timeout(120_000);
    const masterKey = randomBytes(32).toString("hex");
    usedSecrets.add(masterKey);
    // 0.0005 h: 1.8 s.
    const brief = await ServiceProcess.start({
      rpcUrl: node.rpcUrl,
      env: { WALLET_MASTER_KEY: masterKey, TX_TIMEOUT_MS: "30000", APPROVAL_TTL_HOURS: "0.0005" },
    });
    try {
      const client = new AccessClient(brief.url);
      expect(
        (await client.post("/wallets", { kind: "local", label: "owner", privateKey: owner.privateKey }, ROOT)).status,
      ).to.equal(201);
      const asker = await client.makeKey({
        name: "asker",
        scopes: ["nft:configure", "nft:read"],
        approval: { operations: ["setCost"] },
      });
      const held = await client.post(
        "/nft/setCost",
        { from: "owner", contractAddress: collection, cost: "999" },
        bearer(asker.key),
      );
      expect(held.status, held.text).to.equal(202);
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const expired = await client.getAs("/approvals?status=expired", ROOT);
      expect(expired.body.approvals.map((a: { id: string }) => a.id)).to.include(held.body.approvalId);
      const op = await client.getAs(`/nft/operations/${held.body.operationId}`, bearer(asker.key));
      expect(op.body.status).to.equal("failed");
      expect(op.body.error.code).to.equal("APPROVAL_EXPIRED");
      expectError(
        await client.post(`/approvals/${held.body.approvalId}/approve`, {}, ROOT),
        409,
        "APPROVAL_NOT_PENDING",
      );
    } finally {
      await brief.stop();
    }
  });

  it("a held write must sign with a wallet the service holds: privateKey is 403", async function () {
    const res = await api.post(
      "/nft/setCost",
      { privateKey: owner.privateKey, contractAddress: collection, cost: "1" },
      as(agent),
    );
    expectError(res, 403, "FORBIDDEN");
  });
});
