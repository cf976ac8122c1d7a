/**
 * Jobs under approvals (API.md, "Approvals": "a job whose rows need approval asks once for the
 * job"), on a real automining `hardhat node` and the service on PGlite: a job its key's rule would
 * hold in any row is made awaiting_approval with one approval (nothing sent while it waits);
 * approved by another key, it runs to the end as if it had just been made; rejected, it is
 * cancelled with APPROVAL_REJECTED and nothing is sent; undecided past APPROVAL_TTL_HOURS, with
 * APPROVAL_EXPIRED; cancelled while it waits, its approval closes (rejected by the cancelling key). A key without a rule (or whose rule no row
 * meets) starts its jobs at once.
 */
import { expect } from "chai";
import { Wallet, type JsonRpcProvider } from "ethers";
import { expectError } from "../api/expectations";
import {
  ApiClient,
  ChainNode,
  collectionAt,
  deployDirectly,
  DEV_KEYS,
  directProvider,
  fundedWallet,
  ServiceProcess,
  sleep,
  type ApiResponse,
  type JsonBody,
} from "../api/harness";
import { fund, KeyedClient, newMasterKey } from "../wallets/fixture";
import { balancesOf, expectedBalances, randomAddress, recipientRows, transferOwnership, waitForJob } from "./fixture";

describe("jobs under approvals (one automining node, one service on PGlite)", function () {
  this.timeout(240_000);
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let deployer: Wallet;
  let service: ServiceProcess;
  let root: KeyedClient;
  let treasury: JsonBody;
  let collection: string;
  /** Airdrops and whitelists held: approval {operations: ["airdrop", "addToWhitelist"]}. */
  let agent: KeyedClient;
  let agentId: string;
  /** Airdrop rows above 3 tokens held. */
  let capped: KeyedClient;
  /** approvals:decide alone. */
  let boss: KeyedClient;

  const supply = async () => (await collectionAt(collection, provider).totalSupply()) as bigint;
  const nonce = () => provider.getTransactionCount(treasury.address as string, "pending");

  async function makeKey(grant: JsonBody): Promise<{ client: KeyedClient; id: string }> {
    const res = await root.post("/access-keys", grant);
    expect(res.status, res.text).to.equal(201);
    return { client: root.as(res.body.key as string), id: res.body.id as string };
  }

  const airdrop = (client: KeyedClient, rows: [string, number][]) =>
    client.post("/jobs", {
      kind: "airdrop",
      contractAddress: collection,
      from: "treasury",
      recipients: rows.map(([address, amount]) => ({ address, amount })),
    });

  function expectAwaiting(res: ApiResponse, operation: string, rows: number): void {
    expect(res.status, res.text).to.equal(202);
    expect(res.body.status).to.equal("awaiting_approval");
    expect(res.body.jobId).to.be.a("string");
    expect(res.body.approvalId).to.match(/^apr_/);
    expect(res.body.rows).to.equal(rows);
    expect(res.body.plan.operation).to.equal(operation);
    expect(res.body.plan.job.jobId).to.equal(res.body.jobId);
    expect(res.body.plan.job.rows).to.equal(rows);
    expect(res.body.plan.job.batches).to.equal(res.body.batches);
    expect(res.body.plan.collection.toLowerCase()).to.equal(collection.toLowerCase());
    expect(res.body.plan.from).to.equal(treasury.address);
    expect(res.body.plan.chain.id).to.equal("31337");
  }

  before(async function () {
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    deployer = new Wallet(DEV_KEYS[0], provider);
    collection = await deployDirectly(deployer, { maxSupply: 100_000n });
    service = await ServiceProcess.start({
      rpcUrl: node.rpcUrl,
      // Small batches: an approved job runs several.
      env: { WALLET_MASTER_KEY: newMasterKey(), BLOCK_POLL_MS: "100", LOG_LEVEL: "warn", MAX_GAS_PER_TX: "600000" },
    });
    root = new KeyedClient(new ApiClient(service.url));
    treasury = await root.createWallet({ kind: "local", label: "treasury" });
    await fund(provider, treasury.address as string, 1_000n * 10n ** 18n);
    await transferOwnership(deployer, collection, treasury.address as string);
    const scopes = ["nft:mintForFree", "nft:configure", "nft:read"];
    const made = await makeKey({
      name: "agent",
      scopes,
      approval: { operations: ["airdrop", "addToWhitelist"] },
    });
    agent = made.client;
    agentId = made.id;
    capped = (await makeKey({ name: "capped", scopes, approval: { mintAmountAbove: 3 } })).client;
    boss = (await makeKey({ name: "boss", scopes: ["approvals:decide"] })).client;
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await node?.stop();
  });

  it("a held airdrop waits for one approval, sends nothing, and runs every row once approved", async function () {
    const rows = recipientRows(30);
    const [supplyBefore, nonceBefore] = [await supply(), await nonce()];
    // The dry run says so (an MCP plan passes it on), and makes nothing.
    const dry = await agent.post("/jobs", {
      kind: "airdrop",
      contractAddress: collection,
      from: "treasury",
      dryRun: true,
      recipients: rows.map(([address, amount]) => ({ address, amount })),
    });
    expect(dry.status, dry.text).to.equal(200);
    expect(dry.body).to.include({ dryRun: true, approvalRequired: true, rows: 30 });
    const held = await airdrop(agent, rows);
    expectAwaiting(held, "airdrop", 30);
    expect(held.body.batches).to.be.greaterThan(1);
    expect(held.body.plan.job.totalAmount).to.equal(rows.reduce((n, [, amount]) => n + amount, 0).toString());
    expect(held.body.plan.requestedBy).to.deep.equal({ keyId: agentId, name: "agent" });
    const jobId = held.body.jobId as string;

    const waiting = await agent.get(`/jobs/${jobId}`);
    expect(waiting.body).to.include({ status: "awaiting_approval", approvalId: held.body.approvalId });
    expect(waiting.body.rowsByState.pending).to.equal(30);
    await sleep(1_500);
    expect(await supply()).to.equal(supplyBefore);
    expect(await nonce()).to.equal(nonceBefore);
    expect((await agent.get(`/jobs/${jobId}`)).body.status).to.equal("awaiting_approval");

    // One approval for the whole job, listed with it; the key that asked cannot decide it.
    const listed = await boss.get("/approvals?status=pending");
    expect(listed.status, listed.text).to.equal(200);
    const approval = (listed.body.approvals as JsonBody[]).find((a) => a.id === held.body.approvalId)!;
    expect(approval).to.include({ jobId, status: "pending", chainId: "31337" });
    expect(approval).to.not.have.property("operationId");
    expect(approval.plan.job.rows).to.equal(30);
    expectError(await agent.post(`/approvals/${approval.id}/approve`, {}), 403, "FORBIDDEN");

    const approved = await boss.post(`/approvals/${approval.id}/approve`, {});
    expect(approved.status, approved.text).to.equal(202);
    expect(approved.body).to.include({ jobId, status: "running", approvalId: approval.id, rows: 30 });
    const done = await waitForJob(agent, jobId, ["completed", "failed", "cancelled"]);
    expect(done.status).to.equal("completed");
    expect(done.rowsByState.confirmed).to.equal(30);
    const expected = expectedBalances(rows);
    const balances = await balancesOf(provider, collection, [...expected.keys()]);
    for (const [address, amount] of expected) expect(balances.get(address), address).to.equal(amount);
    expect(await supply()).to.equal(supplyBefore + rows.reduce((n, [, amount]) => n + BigInt(amount), 0n));

    // Decided once: a second approve is 409, and the approval shows who decided.
    expectError(await boss.post(`/approvals/${approval.id}/approve`, {}), 409, "APPROVAL_NOT_PENDING");
    const decided = await boss.get("/approvals?status=approved");
    const row = (decided.body.approvals as JsonBody[]).find((a) => a.id === approval.id)!;
    expect(row.decidedBy.name).to.equal("boss");
  });

  it("a rejected job is cancelled with APPROVAL_REJECTED and nothing is sent", async function () {
    const addresses = Array.from({ length: 12 }, () => randomAddress());
    const nonceBefore = await nonce();
    const held = await agent.post("/jobs", {
      kind: "whitelist",
      contractAddress: collection,
      from: "treasury",
      addresses,
    });
    expectAwaiting(held, "addToWhitelist", 12);
    const rejected = await boss.post(`/approvals/${held.body.approvalId}/reject`, { reason: "not this list" });
    expect(rejected.status, rejected.text).to.equal(200);
    expect(rejected.body).to.include({ status: "rejected", jobId: held.body.jobId, reason: "not this list" });

    const job = (await agent.get(`/jobs/${held.body.jobId}`)).body;
    expect(job.status).to.equal("cancelled");
    expect(job.error.code).to.equal("APPROVAL_REJECTED");
    expect(job.error.message).to.contain("not this list");
    expect(job.finishedAt).to.be.a("string");
    expect(job.rowsByState).to.deep.equal({ pending: 12, sent: 0, confirmed: 0, failed: 0 });
    expect((job.batches as JsonBody[]).every((b) => b.status === "cancelled" && b.operationId === null)).to.equal(true);
    await sleep(1_000);
    expect(await nonce()).to.equal(nonceBefore);
    const contract = collectionAt(collection, provider);
    for (const address of addresses.slice(0, 3)) expect(await contract.whitelisted(address)).to.equal(false);
    expectError(await boss.post(`/approvals/${held.body.approvalId}/approve`, {}), 409, "APPROVAL_NOT_PENDING");
    // Cancelled already: nothing to cancel.
    expectError(await agent.post(`/jobs/${held.body.jobId}/cancel`, {}), 409, "JOB_NOT_RUNNABLE");
  });

  it("a held job cancelled while it waits closes its approval: rejected by the cancelling key, never sent", async function () {
    const nonceBefore = await nonce();
    const held = await airdrop(agent, recipientRows(5));
    expectAwaiting(held, "airdrop", 5);
    const approvalId = held.body.approvalId as string;
    const cancelled = await agent.post(`/jobs/${held.body.jobId}/cancel`, {});
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body).to.include({ status: "cancelled", approvalId });

    // Out of the pending list; closed as a rejection the cancelling key decided, saying why.
    const pending = await boss.get("/approvals?status=pending");
    expect(pending.status, pending.text).to.equal(200);
    expect((pending.body.approvals as JsonBody[]).map((a) => a.id)).to.not.include(approvalId);
    const rejected = await boss.get("/approvals?status=rejected");
    const approval = (rejected.body.approvals as JsonBody[]).find((a) => a.id === approvalId)!;
    expect(approval).to.include({ status: "rejected", jobId: held.body.jobId });
    expect(approval.decidedBy).to.deep.equal({ keyId: agentId, name: "agent" });
    expect(approval.reason).to.contain("cancelled").and.contain("before a decision");
    expect(approval.decidedAt).to.be.a("string");
    // Audited as a rejection, by the key that cancelled.
    const events = (await root.get("/audit-events?limit=50")).body.auditEvents as JsonBody[];
    const audited = events.find((e) => e.targetId === approvalId)!;
    expect(audited).to.include({ action: "approval.rejected", targetType: "approval", keyName: "agent" });
    expect(audited.details).to.include({ jobId: held.body.jobId, operation: "airdrop", reason: approval.reason });

    expectError(await boss.post(`/approvals/${approvalId}/approve`, {}), 409, "APPROVAL_NOT_PENDING");
    expectError(await boss.post(`/approvals/${approvalId}/reject`, { reason: "late" }), 409, "APPROVAL_NOT_PENDING");
    const job = (await agent.get(`/jobs/${held.body.jobId}`)).body;
    expect(job.status).to.equal("cancelled");
    expect(job.rowsByState).to.deep.equal({ pending: 5, sent: 0, confirmed: 0, failed: 0 });
    await sleep(1_000);
    expect(await nonce()).to.equal(nonceBefore);
  });

  it("mintAmountAbove: a job is held when any row passes it, and starts at once when none does", async function () {
    const small: [string, number][] = [
      [randomAddress(), 1],
      [randomAddress(), 3],
    ];
    const dry = await capped.post("/jobs", {
      kind: "airdrop",
      contractAddress: collection,
      from: "treasury",
      dryRun: true,
      recipients: small.map(([address, amount]) => ({ address, amount })),
    });
    expect(dry.body).to.not.have.property("approvalRequired");
    const started = await airdrop(capped, small);
    expect(started.status, started.text).to.equal(202);
    expect(started.body.status).to.equal("running");
    expect(started.body).to.not.have.property("approvalId");
    expect((await waitForJob(capped, started.body.jobId as string, ["completed", "failed"])).status).to.equal(
      "completed",
    );

    const large: [string, number][] = [
      [randomAddress(), 1],
      [randomAddress(), 4],
    ];
    const held = await airdrop(capped, large);
    expectAwaiting(held, "airdrop", 2);
    expect(held.body.plan.job.largestAmount).to.equal("4");
    // Rejected: it is not left waiting.
    const rejected = await boss.post(`/approvals/${held.body.approvalId}/reject`, { reason: "too many" });
    expect(rejected.status, rejected.text).to.equal(200);
  });

  it("a key without a rule starts its job at once", async function () {
    const plain = (await makeKey({ name: "plain", scopes: ["nft:mintForFree", "nft:read"] })).client;
    const rows = recipientRows(3);
    const res = await airdrop(plain, rows);
    expect(res.status, res.text).to.equal(202);
    expect(res.body.status).to.equal("running");
    expect(res.body).to.not.have.property("approvalId");
    const done = await waitForJob(plain, res.body.jobId as string, ["completed", "failed"]);
    expect(done.status).to.equal("completed");
    expect(done).to.not.have.property("approvalId");
  });

  it("undecided past APPROVAL_TTL_HOURS: the job is cancelled with APPROVAL_EXPIRED, nothing sent", async function () {
    const owner = await fundedWallet(provider);
    const own = await deployDirectly(owner.connect(provider));
    // 0.0005 h: 1.8 s.
    const brief = await ServiceProcess.start({
      rpcUrl: node.rpcUrl,
      env: { WALLET_MASTER_KEY: newMasterKey(), LOG_LEVEL: "warn", APPROVAL_TTL_HOURS: "0.0005" },
    });
    try {
      const briefRoot = new KeyedClient(new ApiClient(brief.url));
      await briefRoot.createWallet({ kind: "local", label: "owner", privateKey: owner.privateKey });
      const made = await briefRoot.post("/access-keys", {
        name: "asker",
        scopes: ["nft:mintForFree", "nft:read"],
        approval: { operations: ["airdrop"] },
      });
      expect(made.status, made.text).to.equal(201);
      const asker = briefRoot.as(made.body.key as string);
      const nonceBefore = await provider.getTransactionCount(owner.address, "pending");
      const held = await asker.post("/jobs", {
        kind: "airdrop",
        contractAddress: own,
        from: "owner",
        recipients: [{ address: randomAddress(), amount: 1 }],
      });
      expect(held.status, held.text).to.equal(202);
      expect(held.body.status).to.equal("awaiting_approval");
      await sleep(2_500);
      const expired = await briefRoot.get("/approvals?status=expired");
      expect((expired.body.approvals as JsonBody[]).map((a) => a.id)).to.include(held.body.approvalId);
      const job = (await asker.get(`/jobs/${held.body.jobId}`)).body;
      expect(job.status).to.equal("cancelled");
      expect(job.error.code).to.equal("APPROVAL_EXPIRED");
      expectError(await briefRoot.post(`/approvals/${held.body.approvalId}/approve`, {}), 409, "APPROVAL_NOT_PENDING");
      expect(await provider.getTransactionCount(owner.address, "pending")).to.equal(nonceBefore);
    } finally {
      await brief.stop();
    }
  });
});
