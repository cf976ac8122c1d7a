/**
 * MCP under approvals (docs/mcp.md, "Running an agent under approvals"), on a real automining
 * `hardhat node` and the service: an agent whose key's rule holds mints above 3 plans (the plan
 * says a commit will need approval), commits (a tool result saying it awaits a person, with the
 * approval's and the operation's ids and the plan; nothing sent), an operator approves or rejects
 * over HTTP, and get_operation shows the outcome: confirmed and minted, or failed
 * APPROVAL_REJECTED with nothing sent. A create_job whose rows pass the rule is held the same way,
 * once for the whole job, and followed with get_job.
 */
import type { Client } from "@modelcontextprotocol/client";
import { expect } from "chai";
import { sleep, type JsonBody } from "../api/harness";
import { randomAddress } from "../jobs/fixture";
import type { KeyedClient } from "../wallets/fixture";
import { client2, startWorld, structured, toolError, type McpWorld } from "./fixture";

/** The agent key's rule: a mint above this many waits for a person. */
const MINT_AMOUNT_ABOVE = 3;

describe("MCP under approvals: a held commit, then approve or reject over HTTP, followed with get_operation", function () {
  this.timeout(240_000);
  let world: McpWorld;
  /** The agent's MCP client: nft:read and nft:mintForFree, mints above MINT_AMOUNT_ABOVE held. */
  let agent: Client;
  let agentKeyId: string;
  /** approvals:decide alone, over HTTP. */
  let operator: KeyedClient;

  before(async function () {
    this.timeout(240_000);
    world = await startWorld();
    const made = await world.root.post("/access-keys", {
      name: "agent",
      scopes: ["nft:read", "nft:mintForFree"],
      approval: { mintAmountAbove: MINT_AMOUNT_ABOVE },
    });
    expect(made.status, made.text).to.equal(201);
    agentKeyId = made.body.id as string;
    agent = await client2(world.service.url, made.body.key as string);
    const boss = await world.root.post("/access-keys", { name: "boss", scopes: ["approvals:decide"] });
    expect(boss.status, boss.text).to.equal(201);
    operator = world.root.as(boss.body.key as string);
  });

  after(async function () {
    this.timeout(30_000);
    await agent?.close();
    await world?.stop();
  });

  const nonce = () => world.provider.getTransactionCount(world.treasury.address as string);
  const mintArgs = (mintAmount: number): JsonBody => ({
    contractAddress: world.collection,
    from: "treasury",
    mintAmount,
  });
  const getOperation = async (operationId: string) =>
    structured(await agent.callTool({ name: "get_operation", arguments: { operationId } }));

  /** Plans a mint (the plan saying its commit needs approval), commits it: the held commit's answer. */
  async function heldMint(mintAmount: number): Promise<{ committed: JsonBody; planToken: string }> {
    const planned = structured(await agent.callTool({ name: "mint_for_free", arguments: mintArgs(mintAmount) }));
    expect(planned.stage).to.equal("plan");
    expect(planned.approvalRequired, JSON.stringify(planned)).to.equal(true);
    expect(planned.message).to.include("approval");
    const planToken = planned.planToken as string;
    const answer = await agent.callTool({ name: "mint_for_free", arguments: { ...mintArgs(mintAmount), planToken } });
    const committed = structured(answer);
    expect(committed.stage).to.equal("commit");
    expect(committed.awaitingApproval, JSON.stringify(committed)).to.equal(true);
    expect(committed.approvalId).to.match(/^apr_/);
    expect(committed.operationId).to.be.a("string");
    expect(committed.next).to.deep.equal({ tool: "get_operation", arguments: { operationId: committed.operationId } });
    expect(committed.message).to.include("approval").and.to.include("get_operation");
    // The route's own 202 body: the ids again, and the plan a person decides on.
    expect(committed.result).to.include({
      status: "awaiting_approval",
      approvalId: committed.approvalId,
      operationId: committed.operationId,
      chainId: "31337",
    });
    const plan = committed.result.plan as JsonBody;
    expect(plan.operation).to.equal("mintForFree");
    expect(plan.collection.toLowerCase()).to.equal(world.collection.toLowerCase());
    expect(plan.call.from).to.equal(world.treasury.address);
    expect(plan.requestedBy).to.deep.equal({ keyId: agentKeyId, name: "agent" });
    // A client reading only text reads the same.
    const [text] = (answer as { content: { type: string; text: string }[] }).content;
    expect(JSON.parse(text.text)).to.deep.equal(committed);
    return { committed, planToken };
  }

  it("a plan at or below the rule's threshold says nothing of approval, and its commit is sent at once", async () => {
    const before = await world.supply();
    const planned = structured(await agent.callTool({ name: "mint_for_free", arguments: mintArgs(MINT_AMOUNT_ABOVE) }));
    expect(planned).to.not.have.property("approvalRequired");
    const committed = structured(
      await agent.callTool({
        name: "mint_for_free",
        arguments: { ...mintArgs(MINT_AMOUNT_ABOVE), planToken: planned.planToken },
      }),
    );
    expect(committed).to.not.have.property("awaitingApproval");
    expect(committed.result.status).to.equal("confirmed");
    expect(await world.supply()).to.equal(before + BigInt(MINT_AMOUNT_ABOVE));
  });

  it("a mint above it: the commit awaits approval, nothing sent; approved over HTTP, get_operation shows it confirmed and the supply grew", async () => {
    const mintAmount = MINT_AMOUNT_ABOVE + 2;
    const supplyBefore = await world.supply();
    const nonceBefore = await nonce();
    const { committed, planToken } = await heldMint(mintAmount);
    const operationId = committed.operationId as string;
    expect(await nonce()).to.equal(nonceBefore);
    expect(await world.supply()).to.equal(supplyBefore);

    const waiting = await getOperation(operationId);
    expect(waiting.status).to.equal("awaiting_approval");
    expect(waiting.transactionHashes).to.deep.equal([]);
    expect(waiting.via).to.equal("mcp");

    // The same commit again (a client re-sending): the same answer, replayed; still nothing sent.
    const again = structured(
      await agent.callTool({ name: "mint_for_free", arguments: { ...mintArgs(mintAmount), planToken } }),
    );
    expect(again.replayed).to.equal(true);
    expect(again.approvalId).to.equal(committed.approvalId);
    expect(again.operationId).to.equal(operationId);
    expect(await nonce()).to.equal(nonceBefore);

    const pending = await operator.get("/approvals?status=pending");
    expect(pending.status, pending.text).to.equal(200);
    const listed = (pending.body.approvals as JsonBody[]).find((a) => a.id === committed.approvalId);
    expect(listed?.operationId).to.equal(operationId);

    const approved = await operator.post(`/approvals/${committed.approvalId}/approve`, {});
    expect(approved.status, approved.text).to.equal(200);
    expect(approved.body).to.include({ status: "confirmed", operationId });

    const done = await getOperation(operationId);
    expect(done.status).to.equal("confirmed");
    expect(done.transactionHash).to.be.a("string");
    expect(await world.supply()).to.equal(supplyBefore + BigInt(mintAmount));
    expect(await nonce()).to.equal(nonceBefore + 1);
  });

  it("a mint above it rejected over HTTP: get_operation shows failed APPROVAL_REJECTED, nothing sent; its planToken answers the same error", async () => {
    const mintAmount = MINT_AMOUNT_ABOVE + 1;
    const supplyBefore = await world.supply();
    const nonceBefore = await nonce();
    const { committed, planToken } = await heldMint(mintAmount);
    const operationId = committed.operationId as string;

    const rejected = await operator.post(`/approvals/${committed.approvalId}/reject`, { reason: "not this week" });
    expect(rejected.status, rejected.text).to.equal(200);
    expect(rejected.body.status).to.equal("rejected");

    const failed = await getOperation(operationId);
    expect(failed.status).to.equal("failed");
    expect(failed.error.code).to.equal("APPROVAL_REJECTED");
    expect(failed.error.message).to.include("not this week");
    expect(failed.transactionHashes).to.deep.equal([]);

    const replay = toolError(
      await agent.callTool({ name: "mint_for_free", arguments: { ...mintArgs(mintAmount), planToken } }),
    );
    expect(replay.code).to.equal("APPROVAL_REJECTED");
    expect(await nonce()).to.equal(nonceBefore);
    expect(await world.supply()).to.equal(supplyBefore);
  });

  it("a create_job with a row above it: the plan says so, the commit awaits one approval (get_job), nothing sent; approved, the job runs", async () => {
    const recipients = [MINT_AMOUNT_ABOVE + 1, 1].map((amount) => ({ address: randomAddress(), amount }));
    const args = { kind: "airdrop", contractAddress: world.collection, from: "treasury", recipients };
    const supplyBefore = await world.supply();
    const nonceBefore = await nonce();
    const planned = structured(await agent.callTool({ name: "create_job", arguments: args }));
    expect(planned.approvalRequired, JSON.stringify(planned)).to.equal(true);
    expect(planned.message).to.include("get_job");
    expect(planned.plan).to.include({ dryRun: true, rows: 2, approvalRequired: true });
    const committed = structured(
      await agent.callTool({ name: "create_job", arguments: { ...args, planToken: planned.planToken } }),
    );
    expect(committed.awaitingApproval, JSON.stringify(committed)).to.equal(true);
    const jobId = committed.jobId as string;
    expect(committed.result).to.include({ status: "awaiting_approval", jobId, approvalId: committed.approvalId });
    expect(committed.result.plan.job).to.include({ rows: 2, totalAmount: String(MINT_AMOUNT_ABOVE + 2) });
    expect(committed.next).to.deep.equal({ tool: "get_job", arguments: { id: jobId } });
    const again = structured(
      await agent.callTool({ name: "create_job", arguments: { ...args, planToken: planned.planToken } }),
    );
    expect(again).to.include({ replayed: true, jobId, approvalId: committed.approvalId });

    const waiting = structured(await agent.callTool({ name: "get_job", arguments: { id: jobId } }));
    expect(waiting.status).to.equal("awaiting_approval");
    await sleep(1_000);
    expect(await nonce()).to.equal(nonceBefore);
    expect(await world.supply()).to.equal(supplyBefore);

    const approved = await operator.post(`/approvals/${committed.approvalId}/approve`, {});
    expect(approved.status, approved.text).to.equal(202);
    expect(approved.body).to.include({ jobId, status: "running" });
    const deadline = Date.now() + 60_000;
    let job = waiting;
    while (!["completed", "failed", "cancelled"].includes(job.status as string) && Date.now() < deadline) {
      await sleep(250);
      job = structured(await agent.callTool({ name: "get_job", arguments: { id: jobId } }));
    }
    expect(job.status, JSON.stringify(job)).to.equal("completed");
    expect(await world.supply()).to.equal(supplyBefore + BigInt(MINT_AMOUNT_ABOVE + 2));
  });
});
