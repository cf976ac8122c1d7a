import type { AccessControl, AccessPrincipal, AuditActor, AuditLog } from "../access";
import type { ChainRegistry, RegisteredChain } from "../chains/registry";
import type { SqlDriver, SqlExecutor } from "../db";
import {
  awaitingApprovalBody,
  failApprovedIn,
  failAwaitingIn,
  insertHeldIn,
  NotAwaitingApproval,
  type TransactionEngine,
  type WriteAnswer,
  type WriteRequest,
} from "../engine";
import { ApiError } from "../http/errors";
import type { Logger } from "../http/logger";
import type { HeldWallets } from "../signers/signer";
import { emitEvent } from "../webhooks/events";
import type { z } from "zod";
import { ApprovalStore, newApprovalId, type Approval, type KeyRef } from "./approval-store";
import type { JobApprovalPlan } from "./schemas";

/** What the desk needs of a chain: its engine (a held write is sent on its own chain). */
export interface ApprovalChain extends RegisteredChain {
  readonly engine: TransactionEngine;
  /** What runs its jobs: kicked when a held job is approved (it would find it on its next poll anyway). */
  readonly jobs?: { readonly runner: { kick(): void } };
}

/** An error a held job is cancelled with (APPROVAL_REJECTED, APPROVAL_EXPIRED). */
export interface HeldJobError {
  code: string;
  message: string;
}

/**
 * What the desk needs of the jobs (server/jobs plugs its store in; approvals never imports jobs):
 * a held job started or cancelled in the transaction that records the decision.
 */
export interface HeldJobs {
  /** Makes a job awaiting approval running, on `tx`: false when it is not awaiting approval any more. */
  startIn(tx: SqlExecutor, jobId: string): Promise<boolean>;
  /** Cancels a job awaiting approval with `error`, on `tx`: no batch of it is ever sent. */
  cancelIn(tx: SqlExecutor, jobId: string, error: HeldJobError): Promise<void>;
}

export interface ApprovalDeskDeps {
  db: SqlDriver;
  audit: AuditLog;
  access: AccessControl;
  chains: ChainRegistry<ApprovalChain>;
  /** Who signs an approved write: the wallet it names (a held write always signs with one). */
  wallets?: HeldWallets;
  /** APPROVAL_TTL_HOURS in ms: how long a write waits before it fails with APPROVAL_EXPIRED. */
  ttlMs: number;
  logger: Logger;
  /** The jobs a decision starts or cancels; unset = no job is held (a job its rule would hold is 403). */
  jobs?: HeldJobs;
}

/** What a held write's plan says beside its call: where it goes, and who asked. */
export interface HoldRequest {
  request: WriteRequest;
  engine: TransactionEngine;
  chain: { id: string; name: string };
  /** The collection acted on; null for a deployment. */
  collection: string | null;
  principal: AccessPrincipal;
}

/** A job whose rows its key's rule would hold: one approval for the whole job. */
export interface HoldJobRequest {
  jobId: string;
  chain: { id: string; name: string };
  /** The job's contract. */
  collection: string;
  /** The wallet that signs its batches. */
  from: string;
  operation: string;
  job: z.infer<typeof JobApprovalPlan>["job"];
  principal: AccessPrincipal;
  /** Writes the job, awaiting approval `approvalId`, on `tx` (the approval's transaction). */
  create(tx: SqlExecutor, approvalId: string): Promise<void>;
}

/** The access key id an approval records for a principal (the root key has none). */
const keyRefOf = (principal: AccessPrincipal): KeyRef => ({ keyId: principal.keyId ?? "root", name: principal.name });

/**
 * Approvals (API.md, "Approvals"): a write its key's rule holds waits here, simulated and unsigned,
 * until a person with approvals:decide (not the key that asked) approves or rejects it, or it expires.
 */
export class ApprovalDesk {
  readonly store: ApprovalStore;

  constructor(private readonly deps: ApprovalDeskDeps) {
    this.store = new ApprovalStore(deps.db);
  }

  /**
   * Holds a write: simulated (a refusal throws as a send's would), recorded as an operation
   * awaiting approval with its approval and the approval.requested event, in one transaction.
   * Answers 202 awaiting_approval; a repeat of its Idempotency-Key answers the first one's state.
   */
  async hold(held: HoldRequest): Promise<WriteAnswer> {
    const { request, engine, chain, principal } = held;
    if (!this.deps.wallets || request.signer.kind === "request")
      throw new ApiError(
        "FORBIDDEN",
        "This access key's write needs approval: sign with a wallet the service holds (from), not a privateKey",
        [{ path: "from", message: "a held wallet is needed for a write that waits for approval" }],
      );
    const op = await engine.planHold(request);
    const call = op.call!;
    const approvalId = newApprovalId();
    const plan = {
      operation: op.operation,
      call: { from: op.from, to: call.to, data: call.data, value: call.value.toString() },
      chain,
      collection: held.collection,
      value: call.value.toString(),
      gas: call.gasLimit.toString(),
      context: op.context,
      requestedBy: keyRefOf(principal),
    };
    op.response = { status: 202, body: awaitingApprovalBody(op, approvalId, plan) };
    const inserted = await this.deps.db.transaction(async (tx) => {
      if (!(await insertHeldIn(tx, op))) return false;
      const approval = await this.store.insert(
        tx,
        {
          id: approvalId,
          operationId: op.id,
          jobId: null,
          chainId: op.chainId,
          from: op.from,
          collection: held.collection,
          plan,
          requestedBy: plan.requestedBy,
        },
        this.deps.ttlMs,
      );
      await emitEvent(tx, { type: "approval.requested", ...eventOf(approval) });
      return true;
    });
    if (!inserted) {
      const answer = await engine.replay(op.from, request.idempotencyKey!, request.fingerprint);
      if (answer) return answer; // held: true while the first one waits (engine.replay)
    }
    return { ...op.response, replayed: false, held: true };
  }

  /**
   * Holds a job: written awaiting approval (the runner claims only running jobs) with one approval
   * naming it, its operation, rows and totals, and the approval.requested event, in one transaction.
   */
  async holdJob(held: HoldJobRequest): Promise<{ approvalId: string; plan: z.infer<typeof JobApprovalPlan> }> {
    if (!this.deps.jobs)
      throw new ApiError("FORBIDDEN", "This access key's job needs approval, and no held jobs are kept here");
    const approvalId = newApprovalId();
    const plan = {
      operation: held.operation,
      job: held.job,
      from: held.from,
      chain: held.chain,
      collection: held.collection,
      value: "0",
      requestedBy: keyRefOf(held.principal),
    };
    await this.deps.db.transaction(async (tx) => {
      await held.create(tx, approvalId);
      const approval = await this.store.insert(
        tx,
        {
          id: approvalId,
          operationId: null,
          jobId: held.jobId,
          chainId: held.chain.id,
          from: held.from,
          collection: held.collection,
          plan,
          requestedBy: plan.requestedBy,
        },
        this.deps.ttlMs,
      );
      await emitEvent(tx, { type: "approval.requested", ...eventOf(approval) });
    });
    return { approvalId, plan };
  }

  /** An approval `viewer` may see and decide (its chains, wallets and collections); null otherwise. */
  async visible(viewer: AccessPrincipal, id: string): Promise<Approval | null> {
    await this.expireDue();
    const approval = await this.store.find(id);
    if (!approval) return null;
    if (viewer.chains && !viewer.chains.includes(approval.chainId)) return null;
    if (viewer.wallets && !viewer.wallets.includes(approval.from)) return null;
    const collections = viewer.collections;
    if (
      collections &&
      (approval.collection === null ||
        !(
          collections.includes(approval.collection) ||
          collections.includes(`${approval.chainId}:${approval.collection}`)
        ))
    )
      return null;
    return approval;
  }

  /**
   * Approves and sends it as if it had just arrived: the write's answer (or its refusal, which fails
   * the operation). The decision is recorded in the transaction that stores the operation's nonce
   * and signed transaction (or fails it), so that a crash leaves it either pending (nothing sent;
   * approve again) or approved and queued (the follower sends it once): never approved and unsent.
   */
  async approve(
    actor: AuditActor,
    decider: AccessPrincipal,
    id: string,
  ): Promise<{ approval: Approval; answer: WriteAnswer }> {
    const approval = await this.decidable(decider, id);
    if (approval.jobId !== null) return this.approveJob(actor, decider, approval, approval.jobId);
    const unit = this.deps.chains.find(approval.chainId);
    const op = unit && approval.operationId ? await unit.engine.find(approval.operationId) : null;
    if (!unit || !op) throw new ApiError("CHAIN_UNAVAILABLE", "The chain of this approval is not configured here");
    const decision: { row?: Approval } = {};
    const decide = async (tx: SqlExecutor) => {
      const row = await this.decideIn(tx, actor, decider, approval, "approved", null);
      if (row) decision.row = row;
      return row !== null;
    };
    try {
      // The asker's key held the wallet when it asked; the decider's limits were checked on the approval.
      const signer = await this.deps.wallets!.signerFor(op.from, null).catch(async (err: unknown) => {
        // Its wallet gone since it asked: decided, so it fails rather than wait for nothing.
        if (err instanceof ApiError) await failApprovedIn(this.deps.db, op.id, err, decide);
        throw err;
      });
      const answer = await unit.engine.sendApproved(op, signer, decide);
      return { approval: decision.row!, answer };
    } catch (err) {
      if (err instanceof NotAwaitingApproval) throw await this.decidedElsewhere(approval);
      throw err;
    }
  }

  /**
   * Approves a held job: running from the decision's transaction on, as if it had just been made
   * (202 with the job); 409 JOB_NOT_RUNNABLE when it is not awaiting approval any more (a cancel
   * closes its approval with it: then this approval is not pending, 409 APPROVAL_NOT_PENDING).
   */
  private async approveJob(
    actor: AuditActor,
    decider: AccessPrincipal,
    approval: Approval,
    jobId: string,
  ): Promise<{ approval: Approval; answer: WriteAnswer }> {
    const jobs = this.deps.jobs;
    if (!jobs) throw new ApiError("CHAIN_UNAVAILABLE", "The jobs of this approval are not run here");
    const row = await this.deps.db.transaction(async (tx) => {
      const decided = await this.decideIn(tx, actor, decider, approval, "approved", null);
      if (decided && !(await jobs.startIn(tx, jobId)))
        throw new ApiError(
          "JOB_NOT_RUNNABLE",
          `Job ${jobId} is no longer awaiting approval (cancelled while it waited)`,
        );
      return decided;
    });
    if (!row) throw await this.decidedElsewhere(approval);
    this.deps.chains.find(row.chainId)?.jobs?.runner.kick();
    const { job } = row.plan as z.infer<typeof JobApprovalPlan>;
    const body = {
      jobId,
      status: "running",
      approvalId: row.id,
      rows: job.rows,
      batches: job.batches,
      estimatedGas: job.estimatedGas,
      estimatedCostWei: job.estimatedCostWei,
    };
    return { approval: row, answer: { status: 202, body: JSON.stringify(body), replayed: false } };
  }

  /** Rejects it: its operation fails with APPROVAL_REJECTED and the reason. */
  async reject(actor: AuditActor, decider: AccessPrincipal, id: string, reason: string): Promise<Approval> {
    const approval = await this.decidable(decider, id);
    return this.decide(actor, decider, approval, "rejected", reason);
  }

  /**
   * Closes the approval of a job awaiting it that `canceller` cancels (POST /jobs/{id}/cancel), on
   * `tx` (the cancel's transaction, which cancels the job itself): rejected, decided by the
   * cancelling key, with a reason that says so; audited and announced (approval.decided) as a
   * rejection. Null when it is not pending any more (decided, or past its expiry: the sweep marks it).
   */
  async closeForCancelledJobIn(
    tx: SqlExecutor,
    actor: AuditActor,
    canceller: AccessPrincipal,
    approvalId: string,
  ): Promise<Approval | null> {
    const reason = `The job was cancelled by ${canceller.name} before a decision`;
    const row = await this.store.decide(tx, approvalId, "rejected", keyRefOf(canceller), reason);
    if (!row) return null;
    await this.recordDecisionIn(tx, actor, row, reason);
    return row;
  }

  /**
   * Fails the writes that waited past APPROVAL_TTL_HOURS with APPROVAL_EXPIRED (lazily, before any
   * read or decision, and by the sweep): how many.
   */
  async expireDue(): Promise<number> {
    return this.deps.db.transaction(async (tx) => {
      const expired = await this.store.expireDue(tx);
      for (const approval of expired) {
        const error = new ApiError("APPROVAL_EXPIRED", `Nobody decided on approval ${approval.id} in time`);
        await this.failHeldIn(tx, approval, error);
        await emitEvent(tx, { type: "approval.decided", ...eventOf(approval) });
      }
      return expired.length;
    });
  }

  /**
   * Expires due approvals every `everyMs` (beside the lazy checks), so an undecided write fails on
   * time while nobody reads the approvals. Answers how to stop it.
   */
  startSweep(everyMs: number): () => Promise<void> {
    let running: Promise<unknown> = Promise.resolve();
    const timer = setInterval(() => {
      running = this.expireDue().catch((err: unknown) =>
        this.deps.logger.warn({ err: { message: (err as Error).message } }, "expiring approvals failed"),
      );
    }, everyMs);
    timer.unref();
    return async () => {
      clearInterval(timer);
      await running;
    };
  }

  /** The approval, if `decider` may decide it: 404 when it cannot see it, 403 when it asked for it (or made the key that did). */
  private async decidable(decider: AccessPrincipal, id: string): Promise<Approval> {
    const approval = await this.visible(decider, id);
    if (!approval) throw new ApiError("NOT_FOUND", "No approval with this id is visible to this access key");
    const asker = approval.requestedBy.keyId;
    const asked =
      decider.keyId === asker ||
      (decider.keyId !== null && (await this.deps.access.keys.isDescendant(asker, decider.keyId)));
    if (asked)
      throw new ApiError(
        "FORBIDDEN",
        "A write is decided by another key than the one that asked for it (or a key it made)",
      );
    if (approval.status !== "pending") throw notPending(approval);
    return approval;
  }

  /** The decision, its audit event and approval.decided in one transaction; 409 when another decision won. */
  private async decide(
    actor: AuditActor,
    decider: AccessPrincipal,
    approval: Approval,
    status: "approved" | "rejected",
    reason: string | null,
  ): Promise<Approval> {
    const decided = await this.deps.db.transaction((tx) => this.decideIn(tx, actor, decider, approval, status, reason));
    if (!decided) throw await this.decidedElsewhere(approval);
    return decided;
  }

  /** 409 APPROVAL_NOT_PENDING for an approval another decision (or its expiry) took first, as it stands now. */
  private async decidedElsewhere(approval: Approval): Promise<ApiError> {
    return notPending((await this.store.find(approval.id)) ?? approval);
  }

  /**
   * The decision, its audit event and approval.decided, on `tx` (a rejection fails the operation
   * there too); null when another decision won, or the approval expired.
   */
  private async decideIn(
    tx: SqlExecutor,
    actor: AuditActor,
    decider: AccessPrincipal,
    approval: Approval,
    status: "approved" | "rejected",
    reason: string | null,
  ): Promise<Approval | null> {
    const row = await this.store.decide(tx, approval.id, status, keyRefOf(decider), reason);
    if (!row) return null;
    if (status === "rejected") {
      const error = new ApiError("APPROVAL_REJECTED", `Rejected by ${decider.name}: ${reason}`);
      await this.failHeldIn(tx, row, error);
    }
    await this.recordDecisionIn(tx, actor, row, reason);
    return row;
  }

  /** A decision's audit event (approval.approved or approval.rejected) and approval.decided, on `tx`. */
  private async recordDecisionIn(tx: SqlExecutor, actor: AuditActor, row: Approval, reason: string | null) {
    await this.deps.audit.record(tx, actor, {
      action: `approval.${row.status}`,
      targetType: "approval",
      targetId: row.id,
      details: {
        ...(row.operationId !== null ? { operationId: row.operationId } : {}),
        ...(row.jobId !== null ? { jobId: row.jobId } : {}),
        operation: row.plan.operation,
        ...(reason ? { reason } : {}),
      },
    });
    await emitEvent(tx, { type: "approval.decided", ...eventOf(row) });
  }

  /** A rejected or expired approval's write fails with `error`; its job is cancelled with it (nothing sent). */
  private async failHeldIn(tx: SqlExecutor, approval: Approval, error: ApiError): Promise<void> {
    if (approval.jobId !== null) {
      await this.deps.jobs?.cancelIn(tx, approval.jobId, { code: error.code, message: error.message });
      return;
    }
    await failAwaitingIn(tx, approval.operationId!, error);
  }
}

function notPending(approval: Approval): ApiError {
  return new ApiError("APPROVAL_NOT_PENDING", `Approval ${approval.id} is ${approval.status}, not pending`);
}

/** What an approval event carries; its collection and wallet let endpoint filters and key limits apply. */
function eventOf(approval: Approval) {
  return {
    data: approvalView(approval),
    wallet: approval.from,
    ...(approval.collection ? { collection: approval.collection } : {}),
  };
}

/** An approval as answered and as its events carry it. */
export function approvalView(approval: Approval) {
  return {
    id: approval.id,
    status: approval.status,
    ...(approval.operationId !== null ? { operationId: approval.operationId } : {}),
    ...(approval.jobId !== null ? { jobId: approval.jobId } : {}),
    chainId: approval.chainId,
    plan: approval.plan,
    requestedBy: approval.requestedBy,
    createdAt: approval.createdAt.toISOString(),
    expiresAt: approval.expiresAt.toISOString(),
    ...(approval.decidedAt ? { decidedAt: approval.decidedAt.toISOString() } : {}),
    ...(approval.decidedBy ? { decidedBy: approval.decidedBy } : {}),
    ...(approval.reason !== null ? { reason: approval.reason } : {}),
  };
}
