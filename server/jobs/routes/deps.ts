import type { Context } from "koa";
import { getAddress } from "ethers";
import { z } from "zod";
import { allows, type AccessControl, type AccessDeclaration, type AccessPrincipal } from "../../access";
import type { ApprovalDesk } from "../../approvals";
import type { ChainClient } from "../../chain/chain-client";
import { ApiError } from "../../http/errors";
import { parseInput } from "../../http/validation";
import type { HeldWallets } from "../../signers/signer";
import type { JobRecord, JobStore } from "../job-store";
import type { JobPlanner } from "../planner";
import type { JobKind } from "../rows";
import type { JobRunner } from "../runner";

/** What every /jobs route needs, built once by createJobRouter. */
export interface JobRouteDeps {
  access: AccessControl;
  store: JobStore;
  runner: JobRunner;
  planner: JobPlanner;
  chain: ChainClient;
  /** The wallets a job signs with; unset = none held (404 WALLET_NOT_FOUND). */
  wallets?: HeldWallets;
  /**
   * Where a job its key's approval rule would hold waits for one approval, and the chain it is on;
   * unset = no store for approvals (such a job is 403).
   */
  approvals?: { desk: ApprovalDesk; chain: { id: string; name: string } };
}

/** The scope of the operation a job runs (API.md). */
export const SCOPE_OF_KIND = { airdrop: "nft:mintForFree", whitelist: "nft:configure" } as const;

export const READ: AccessDeclaration = { scope: "nft:read", key: "always" };

/** What a job's write needs (POST /jobs, cancel, resume): either kind's scope, the kind's checked once known. */
export const WRITE_ANY_KIND: readonly AccessDeclaration[] = (["airdrop", "whitelist"] as const).map((kind) => ({
  scope: SCOPE_OF_KIND[kind],
  key: "always",
}));

const declarationOf = (kind: JobKind): AccessDeclaration => ({
  scope: SCOPE_OF_KIND[kind],
  key: "always",
  bodyCollection: "contractAddress",
});

/**
 * Admits a request that runs a job's operation: with the kind's scope when it is known before the
 * body (a query parameter, or the job in the path), else with either scope, the kind's checked by
 * `requireKind` once the body is read.
 */
export async function admitWrite(ctx: Context, deps: JobRouteDeps, kind?: JobKind): Promise<AccessPrincipal> {
  if (kind) return (await deps.access.admit(ctx, declarationOf(kind)))!;
  try {
    return (await deps.access.admit(ctx, declarationOf("airdrop")))!;
  } catch (err) {
    if (err instanceof ApiError && err.code === "FORBIDDEN")
      return (await deps.access.admit(ctx, declarationOf("whitelist")))!;
    throw err;
  }
}

/** 403 unless the key holds the kind's scope and the collection. */
export function requireKind(ctx: Context, deps: JobRouteDeps, kind: JobKind, contractAddress: string): void {
  const principal = ctx.state.access as AccessPrincipal;
  if (!allows(principal, { scope: SCOPE_OF_KIND[kind] }))
    throw new ApiError("FORBIDDEN", `This access key does not hold the scope ${SCOPE_OF_KIND[kind]}`, [
      { path: "scope", message: `the scope ${SCOPE_OF_KIND[kind]}` },
    ]);
  deps.access.checkBody(ctx, declarationOf(kind), { contractAddress });
}

/** Whether the key may see a job: its chain, its collection (on that chain) and its wallet within the key's limits. */
export function visible(ctx: Context, job: JobRecord): boolean {
  const principal = ctx.state.access as AccessPrincipal;
  if (principal.chains && !principal.chains.includes(job.chainId)) return false;
  return allows(principal, { collection: job.contractAddress, chain: job.chainId, wallet: job.from });
}

export const JobParams = z.object({ id: z.string().min(1).max(100) });

/** The job the path names, if the key may see it; 404 JOB_NOT_FOUND otherwise (a hidden job is not told apart). */
export async function jobOfPath(ctx: Context, deps: JobRouteDeps): Promise<JobRecord> {
  const { id } = parseInput(JobParams, ctx.params);
  const job = await deps.store.find(id);
  if (!job || !visible(ctx, job)) throw new ApiError("JOB_NOT_FOUND", `No job ${id}`);
  // What the key's `<chain>:<address>` collections are compared with: the job's chain, whichever router serves it.
  ctx.state.chainId = job.chainId;
  return job;
}

/** A job as GET /jobs/{id} answers it (`batches` only when asked: the list leaves them out). */
export async function jobView(deps: JobRouteDeps, job: JobRecord, withBatches = true) {
  const [rowsByState, batches] = await Promise.all([
    deps.store.rowCounts(job.id),
    withBatches ? deps.store.batches(job.id) : Promise.resolve(undefined),
  ]);
  const sum = (field: "gasUsed" | "weiSpent") =>
    (batches ?? []).reduce((total, b) => total + BigInt(b[field] ?? "0"), 0n).toString();
  return {
    jobId: job.id,
    chainId: job.chainId,
    kind: job.kind,
    status: job.status,
    contractAddress: getAddress(job.contractAddress),
    from: getAddress(job.from),
    rows: job.rows,
    rowsByState,
    batchCount: job.batches,
    estimatedGas: job.estimatedGas,
    estimatedCostWei: job.estimatedCostWei,
    ...(batches
      ? {
          gasUsed: sum("gasUsed"),
          weiSpent: sum("weiSpent"),
          batches: batches.map((b) => ({
            index: b.index,
            rows: b.count,
            status: b.status,
            operationId: b.operationId,
            gasUsed: b.gasUsed,
            weiSpent: b.weiSpent,
            ...(b.error ? { error: b.error } : {}),
          })),
        }
      : {}),
    ...(job.error ? { error: job.error } : {}),
    ...(job.approvalId ? { approvalId: job.approvalId } : {}),
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
    finishedAt: job.finishedAt?.toISOString() ?? null,
  };
}
