import { createHash, randomUUID } from "node:crypto";
import type Router from "@koa/router";
import type { Context } from "koa";
import { z } from "zod";
import { chainField } from "../../http/fields";
import type { AccessPrincipal } from "../../access";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import { currentVia } from "../../http/tool-call";
import { address } from "../../http/fields";
import { from } from "../../nft/fields";
import { ROOT_KEY_ID } from "../../nft";
import type { TransactionSigner } from "../../signers/signer";
import {
  bodyTooLarge,
  checkRows,
  longestTopLevelArray,
  MAX_BODY_BYTES,
  MAX_ROWS,
  readBoundedBody,
  readCsvRows,
  tooManyRows,
  type InputRow,
  type JobKind,
  type RowProblems,
} from "../rows";
import { idempotencyKeyOf } from "../../engine";
import { requireExistingEditions } from "../editions";
import { amountsOf, RULE_OPERATIONS, ruleHoldsJob } from "../approval";
import { admitWrite, requireKind, type JobRouteDeps } from "./deps";
import { JobPlanView } from "./schemas";

const Kind = z.enum(["airdrop", "whitelist"]);

const CreateQuery = z.object({
  kind: Kind.optional(),
  contractAddress: address("contractAddress").optional(),
  from: from.optional(),
  dryRun: z.enum(["true", "false"]).optional(),
  chain: chainField,
});

/** The JSON body, its rows left to checkRows (which names each bad one as `row N`). */
const CreateBody = z
  .object({
    kind: Kind,
    contractAddress: address("contractAddress"),
    from,
    chain: chainField,
    dryRun: z.boolean().optional(),
    recipients: z.array(z.unknown()).optional(),
    addresses: z.array(z.unknown()).optional(),
  })
  .superRefine((body, ctx) => {
    const list = body.kind === "airdrop" ? "recipients" : "addresses";
    if (body[list] === undefined) ctx.addIssue({ code: "custom", path: [list], message: `${list} is required` });
  });

/** What the OpenAPI document shows of the JSON body. */
const CreateBodyDoc = z
  .object({
    kind: Kind,
    contractAddress: address("contractAddress"),
    from: from.openapi({ description: "A wallet the service holds (address or label)" }),
    chain: chainField,
    dryRun: z.boolean().optional(),
    recipients: z
      .array(
        z.object({
          address: address("address"),
          amount: z.union([z.string(), z.number().int()]),
          tokenId: z.union([z.string(), z.number().int()]).optional().openapi({
            description:
              "The edition to mint: required on an ERC-1155 edition contract, refused on an ERC-721 collection",
          }),
        }),
      )
      .max(MAX_ROWS)
      .optional(),
    addresses: z.array(address("addresses[]")).max(MAX_ROWS).optional(),
  })
  // CreateBody's superRefine, where a client reads it: an airdrop's recipients, a whitelist's addresses.
  .openapi("CreateJobRequest", {
    oneOf: [
      { properties: { kind: { const: "airdrop" } }, required: ["recipients"] },
      { properties: { kind: { const: "whitelist" } }, required: ["addresses"] },
    ],
  } as object);

/**
 * The JSON body, read to at most MAX_BODY_BYTES; a list past MAX_ROWS is refused on its length,
 * counted in the text before anything is parsed or checked.
 */
async function readJson(ctx: Context): Promise<unknown> {
  if (!ctx.request.is("json")) return {};
  // With several chains the dispatcher may have read the body already for its `chain`: read once.
  const read = ctx.request.rawBody;
  const text = typeof read === "string" ? read : (await readBoundedBody(ctx.req)).toString("utf8");
  const longest = longestTopLevelArray(text);
  if (longest > MAX_ROWS) throw tooManyRows(longest);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError("VALIDATION_ERROR", "Request body is not valid JSON", [
      { path: "(body)", message: "invalid JSON" },
    ]);
  }
}

interface JobRequest {
  kind: JobKind;
  contractAddress: string;
  signer: TransactionSigner;
  dryRun: boolean;
  rows: InputRow[];
  problems?: RowProblems;
}

/**
 * What the key may do with the job's fields, before its rows are looked at: the kind's scope and
 * the collection (403), then the wallet, among those the key may use (404 for one out of its reach,
 * the same answer as for one the service does not hold, whatever state its signer is in).
 */
async function admitJob(ctx: Context, deps: JobRouteDeps, kind: JobKind, contractAddress: string, from: string) {
  requireKind(ctx, deps, kind, contractAddress);
  if (!deps.wallets) throw new ApiError("WALLET_NOT_FOUND", "The service holds no wallets");
  const principal = ctx.state.access as AccessPrincipal | undefined;
  return deps.wallets.signerFor(from, principal?.wallets ?? null);
}

/**
 * The request as CSV (kind, contractAddress and from in the query: every check but the rows' is
 * made before a byte of the body is read) or JSON (read first: the fields are in it).
 */
async function readRequest(ctx: Context, deps: JobRouteDeps): Promise<JobRequest> {
  const query = parseInput(CreateQuery, ctx.query);
  const declared = Number(ctx.get("content-length") || 0);
  // Refused on its declared length, before a byte of it is read.
  if (declared > MAX_BODY_BYTES) throw bodyTooLarge();
  if (ctx.request.is("text/csv")) {
    const missing = (["kind", "contractAddress", "from"] as const).filter((k) => query[k] === undefined);
    if (missing.length > 0)
      throw new ApiError(
        "VALIDATION_ERROR",
        `A CSV job needs ${missing.join(", ")} as query parameters`,
        missing.map((path) => ({ path, message: "required with Content-Type: text/csv" })),
      );
    const signer = await admitJob(ctx, deps, query.kind!, query.contractAddress!, query.from!);
    const { rows, problems } = await readCsvRows(ctx.req);
    return {
      kind: query.kind!,
      contractAddress: query.contractAddress!,
      signer,
      dryRun: query.dryRun === "true",
      rows,
      problems,
    };
  }
  const raw = await readJson(ctx);
  const body = parseInput(CreateBody, raw);
  const signer = await admitJob(ctx, deps, body.kind, body.contractAddress, body.from);
  const list = (body.kind === "airdrop" ? body.recipients : body.addresses) ?? [];
  const rows: InputRow[] = list.map((item, i) =>
    body.kind === "airdrop"
      ? {
          line: i + 1,
          address: (item as { address?: unknown } | null)?.address,
          amount: (item as { amount?: unknown } | null)?.amount,
          tokenId: (item as { tokenId?: unknown } | null)?.tokenId,
        }
      : { line: i + 1, address: item },
  );
  return {
    kind: body.kind,
    contractAddress: body.contractAddress,
    signer,
    dryRun: body.dryRun === true || query.dryRun === "true",
    rows,
  };
}

/** POST /jobs: every row checked, then planned; 202 with the job, or 200 with the plan alone (dryRun). */
export function mountCreateJob(router: Router, deps: JobRouteDeps): void {
  router.post("/jobs", async (ctx) => {
    const queryKind = Kind.safeParse(ctx.query.kind);
    await admitWrite(ctx, deps, queryKind.success ? queryKind.data : undefined);
    const request = await readRequest(ctx, deps);
    const { signer } = request;
    // An edition contract's airdrop rows name their edition; an ERC-721's name none.
    const standard = await deps.chain.standardOf(request.contractAddress);
    const entries = checkRows(request.kind, request.rows, request.problems, {
      standard,
      contractAddress: request.contractAddress,
    });
    if (standard === "erc1155" && request.kind === "airdrop")
      await requireExistingEditions(deps.chain, request.contractAddress, entries);
    const principal = ctx.state.access as AccessPrincipal;
    const keyed = request.dryRun ? undefined : idempotencyKeyOf(ctx.get("Idempotency-Key") || undefined);
    const jobId = keyed ? jobIdOf(principal.keyId ?? ROOT_KEY_ID, keyed) : randomUUID();
    if (keyed) {
      const earlier = await deps.store.find(jobId);
      if (earlier) {
        const same =
          earlier.kind === request.kind &&
          earlier.contractAddress === request.contractAddress.toLowerCase() &&
          earlier.from === signer.address.toLowerCase() &&
          earlier.rows === entries.length;
        if (!same)
          throw new ApiError(
            "IDEMPOTENCY_KEY_REUSED",
            "This Idempotency-Key made another job; use a new key for a new job",
          );
        ctx.status = 202;
        ctx.set("Idempotent-Replayed", "true");
        ctx.set("Location", `/jobs/${jobId}`);
        const { rows, batches, estimatedGas, estimatedCostWei, approvalId } = earlier;
        ctx.body = {
          jobId,
          status: earlier.status,
          ...(approvalId ? { approvalId } : {}),
          rows,
          batches,
          estimatedGas,
          estimatedCostWei,
        };
        return;
      }
    }
    const plan = await deps.planner.plan(request.kind, request.contractAddress, entries);
    const summary = {
      rows: entries.length,
      batches: plan.batches.length,
      estimatedGas: plan.estimatedGas.toString(),
      estimatedCostWei: plan.estimatedCostWei.toString(),
      maxGasPerTx: plan.maxGasPerTx.toString(),
    };
    // A job its key's rule would hold in any row waits, made but not started, for one approval.
    const held = ruleHoldsJob(principal.approval, request.kind, entries);
    if (request.dryRun) {
      ctx.body = { dryRun: true, ...summary, ...(held ? { approvalRequired: true } : {}) };
      return;
    }
    const job = {
      id: jobId,
      kind: request.kind,
      chainId: deps.chain.options.chainId.toString(),
      contractAddress: request.contractAddress.toLowerCase(),
      from: signer.address.toLowerCase(),
      accessKeyId: principal.keyId ?? ROOT_KEY_ID,
      via: currentVia(),
      entries,
      plan,
    };
    if (held) {
      if (!deps.approvals)
        throw new ApiError("FORBIDDEN", "This access key's jobs need approval, and no approvals are kept here");
      const holding = await deps.approvals.desk.holdJob({
        jobId,
        chain: deps.approvals.chain,
        collection: job.contractAddress,
        from: signer.address,
        operation: RULE_OPERATIONS[request.kind][0],
        job: {
          jobId,
          kind: request.kind,
          rows: summary.rows,
          batches: summary.batches,
          ...amountsOf(request.kind, entries),
          estimatedGas: summary.estimatedGas,
          estimatedCostWei: summary.estimatedCostWei,
        },
        principal,
        create: (tx, approvalId) => deps.store.createIn(tx, job, approvalId),
      });
      ctx.status = 202;
      ctx.set("Location", `/jobs/${jobId}`);
      ctx.body = { jobId, status: "awaiting_approval", approvalId: holding.approvalId, ...summary, plan: holding.plan };
      return;
    }
    await deps.store.create(job);
    deps.runner.kick();
    ctx.status = 202;
    ctx.set("Location", `/jobs/${jobId}`);
    ctx.body = { jobId, status: "running", ...summary };
  });
}

/**
 * The id of the job an Idempotency-Key makes, the same for every repeat of it by one access key:
 * a repeat finds the job instead of making a second one (the MCP tools' plan tokens).
 */
function jobIdOf(accessKeyId: string, key: string): string {
  const hex = createHash("sha256").update(`job\n${accessKeyId}\n${key}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function registerCreateJobOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/jobs",
    operationId: "createJob",
    tags: ["jobs"],
    summary: "Run an airdrop or a whitelist of up to 100,000 rows as a job (JSON, or CSV with the query parameters)",
    description:
      "Every row is checked first: a bad one is 400 naming `row N` and nothing is stored. Duplicates are merged. The list is cut into batches under MAX_GAS_PER_TX, each sent as an operation signed by the wallet `from`. Scope nft:mintForFree (airdrop) or nft:configure (whitelist). On an ERC-1155 edition contract every airdrop row names its edition (`tokenId`; CSV `address,amount,tokenId`), each batch holding one edition (404 TOKEN_NOT_FOUND for an edition that does not exist); on an ERC-721 collection a tokenId is 400.",
    security: [{ AccessKey: [] }],
    request: {
      query: CreateQuery,
      body: {
        required: true,
        content: {
          "application/json": { schema: CreateBodyDoc },
          "text/csv": {
            schema: z.string().openapi({
              description:
                "Rows `address,amount` (airdrop), `address,amount,tokenId` (an edition contract's airdrop) or `address`; optional header, which then gives the columns' order",
            }),
          },
        },
      },
    },
    responses: {
      200: { description: "The plan (dryRun): nothing made", content: { "application/json": { schema: JobPlanView } } },
      202: {
        description:
          "The job, running; or awaiting_approval (with approvalId and plan) when its key's approval rule would hold any of its rows: it starts once approved",
        content: { "application/json": { schema: JobPlanView } },
      },
      400: errorResponse("VALIDATION_ERROR"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      404: errorResponse("WALLET_NOT_FOUND, CONTRACT_NOT_FOUND, TOKEN_NOT_FOUND"),
      422: errorResponse("UNSUPPORTED_CONTRACT"),
      429: errorResponse("RATE_LIMITED"),
      503: errorResponse("CHAIN_UNAVAILABLE"),
    },
  });
}
