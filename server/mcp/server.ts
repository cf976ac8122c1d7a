import { createHash } from "node:crypto";
import { McpServer, type CallToolResult } from "@modelcontextprotocol/server";
import type { AccessPrincipal, AuditLog } from "../access";
import type { SqlExecutor } from "../db";
import type { PlanTokens } from "./plan-token";
import { routeSchemas } from "./route-schemas";
import { ApiError } from "../http/errors";
import { parseBody } from "../http/validation";
import { jsonSchemaOf, passThrough, routeArguments, toolInputOnce, toolOutput, type JsonObjectSchema } from "./schemas";
import { asTool } from "../http/tool-call";
import { TOOLS, toolScopes, type ToolSpec } from "./tools";

/** The largest tool result, in characters of its JSON (API.md, "MCP"). */
export const MAX_RESULT_CHARS = 20_000;

/** Who calls: the presented key (it signs the route calls and binds plan tokens), its principal, its address. */
export interface McpCaller {
  key: string;
  principal: AccessPrincipal;
  clientAddress: string;
}

/** One HTTP request to a route of the service, made in-process with the caller's key. */
export interface RouteRequest {
  method: string;
  url: string;
  body?: unknown;
  headers: Record<string, string>;
  clientAddress: string;
}

export interface RouteAnswer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

export interface McpDeps {
  /** Calls a route through the Koa app's middleware, as any client's request goes: its own access rules apply. */
  dispatch(request: RouteRequest): Promise<RouteAnswer>;
  planTokens: PlanTokens;
  /** Changing tool calls are audit events. */
  audit?: { log: AuditLog; db: SqlExecutor };
}

/** An error a tool answers as its result (isError), with the API's code and message. */
class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

interface CompiledTool {
  input: JsonObjectSchema;
  output: JsonObjectSchema;
}

const compiled = new Map<string, CompiledTool>();

/** A tool's schemas, made once per process: a server is made per request (stateless), its tools from these. */
export function compileTool(tool: ToolSpec): CompiledTool {
  let found = compiled.get(tool.name);
  if (!found) {
    found = { input: jsonSchemaOf(toolInputOnce(tool)), output: toolOutput(tool) };
    compiled.set(tool.name, found);
  }
  return found;
}

export function annotationsOf(tool: ToolSpec) {
  return tool.write
    ? // Every write spends gas or cannot be taken back; a repeat with its planToken sends nothing more.
      { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true }
    : { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
}

/**
 * The MCP server for one caller: only the tools whose scope its key holds; only `only` among them
 * when the request is a call of that tool (the others would be registered for nothing).
 */
export function mcpServerFor(caller: McpCaller, deps: McpDeps, only?: string): McpServer {
  const server = new McpServer(
    { name: "nft-ops", version: "0.1.0" },
    {
      instructions:
        "Operate ERC-721 collections and ERC-1155 edition contracts (tokenId names an edition). Write tools plan first: call without planToken, read the plan, then call again with the same arguments and its planToken to send. A commit answered awaitingApproval is held for a person's decision: nothing is sent until then; follow it with get_operation.",
    },
  );
  for (const tool of TOOLS) {
    if (only !== undefined && tool.name !== only) continue;
    if (!toolScopes(tool).some((scope) => caller.principal.scopes.has(scope))) continue;
    const { input, output } = compileTool(tool);
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: passThrough(input),
        outputSchema: passThrough(output),
        annotations: { title: tool.title, ...annotationsOf(tool) },
      },
      (args) => asTool(tool.name, () => runTool(tool, args, caller, deps)),
    );
  }
  return server;
}

async function runTool(
  tool: ToolSpec,
  given: Record<string, unknown>,
  caller: McpCaller,
  deps: McpDeps,
): Promise<CallToolResult> {
  try {
    // Checked against the tool's own input schema before anything runs: a missing, mistyped or
    // unknown argument is named, and no route is called with it.
    parseBody(toolInputOnce(tool), given);
    const args = routeArguments(tool, given);
    if (!tool.write) return answer(await read(tool, args, caller, deps));
    const { planToken, ...rest } = args;
    if (planToken === undefined) return answer(await plan(tool, rest, caller, deps));
    if (typeof planToken !== "string") throw new ToolError("VALIDATION_ERROR", "planToken must be a string");
    const committed = await commit(tool, rest, planToken, caller, deps);
    await recordAudit(tool, committed, caller, deps);
    return answer(bounded(committed));
  } catch (err) {
    if (err instanceof ToolError) return errorResult(err.code, err.message, err.details);
    if (err instanceof ApiError)
      return errorResult(err.code, err.message.replace(/^Invalid request/, "Invalid arguments"), err.details);
    return errorResult("INTERNAL_ERROR", "Internal error");
  }
}

type Structured = Record<string, unknown>;

/** A read: the route's answer; a page too large for one result is asked again, smaller. */
async function read(tool: ToolSpec, args: Structured, caller: McpCaller, deps: McpDeps): Promise<Structured> {
  const route = routeSchemas(tool.route);
  let limit = typeof args.limit === "number" ? args.limit : undefined;
  for (;;) {
    const body = await call(tool.route, limit === undefined ? args : { ...args, limit }, caller, deps);
    if (JSON.stringify(body).length * 2 < MAX_RESULT_CHARS - 200) return body;
    if (!("limit" in route.query)) throw new ToolError("RESULT_TOO_LARGE", "The answer is over 20,000 characters");
    const items = Object.values(body).find(Array.isArray)?.length ?? 2;
    if (items <= 1) throw new ToolError("RESULT_TOO_LARGE", "One item of this list is over 20,000 characters");
    limit = Math.max(1, Math.floor(items / 2));
  }
}

/** A plan: the route's own simulation (nothing recorded or sent), and a token for exactly these arguments. */
async function plan(tool: ToolSpec, args: Structured, caller: McpCaller, deps: McpDeps): Promise<Structured> {
  const tokenFor = () => deps.planTokens.issue({ key: caller.key, tool: tool.name, args });
  try {
    const simulated = await simulate(tool, args, caller, deps);
    return {
      stage: "plan",
      ...tokenFor(),
      ...approvalAhead(simulated, tool.write?.by === "jobDryRun"),
      plan: await withMinted(tool, args, simulated, caller, deps),
    };
  } catch (err) {
    if (!(tool.write?.tooLargeAsJob && isTooLarge(err))) throw err;
    const simulated = await call("createJob", { ...asJob(args), dryRun: true }, caller, deps);
    return { stage: "plan", ...tokenFor(), job: true, ...approvalAhead(simulated, true), plan: simulated };
  }
}

/**
 * Whether the key's approval rule will hold this write (or job) when committed: what the route's
 * own dry run says (approvalRequired), judged by the predicate the commit meets. A setting already
 * in force sends nothing and is held by nothing; a price changed before the commit is judged again then.
 */
function approvalAhead(simulated: Structured, job = false): Structured {
  if (simulated.approvalRequired !== true) return {};
  return {
    approvalRequired: true,
    message: job
      ? "This key's approval rule holds this job: its commit makes it but does not start it (awaiting_approval, nothing sent) until a person with approvals:decide approves it (then it runs) or rejects it (cancelled, APPROVAL_REJECTED); follow it with get_job."
      : "This key's approval rule holds this write: its commit will not send it but hold it (awaitingApproval) until a person with approvals:decide approves or rejects it; then follow it with get_operation.",
  };
}

/** The most token ids a plan lists; past it, the first and the last. */
const LISTED_IDS = 100n;

/**
 * A mint's plan with the token ids it would mint and the supply after, from the supply now (the
 * reference collection numbers tokens on from its supply); on an edition contract (`tokenId`), the
 * edition, the amount and its supply after. Left out when the key may not read the supply: the plan
 * is still a plan.
 */
async function withMinted(
  tool: ToolSpec,
  args: Structured,
  simulated: Structured,
  caller: McpCaller,
  deps: McpDeps,
): Promise<Structured> {
  const count = tool.write?.mints?.(args) ?? 0n;
  if (count === 0n) return simulated;
  const { contractAddress, from, chain, tokenId } = args;
  const read = {
    contractAddress,
    from,
    ...(chain !== undefined ? { chain } : {}),
    ...(tokenId !== undefined ? { tokenId } : {}),
  };
  const supply = await call("totalSupply", read, caller, deps).then(
    (body) => BigInt(body.totalSupply as string),
    () => undefined,
  );
  if (supply === undefined) return simulated;
  const result = (simulated.result as Structured | undefined) ?? {};
  if (tokenId !== undefined)
    return {
      ...simulated,
      result: {
        ...result,
        tokenId: String(tokenId),
        amount: count.toString(),
        supplyAfter: (supply + count).toString(),
      },
    };
  const ids =
    count <= LISTED_IDS
      ? { tokenIds: Array.from({ length: Number(count) }, (_, i) => (supply + 1n + BigInt(i)).toString()) }
      : { firstTokenId: (supply + 1n).toString(), lastTokenId: (supply + count).toString() };
  return { ...simulated, result: { ...result, ...ids, supplyAfter: (supply + count).toString() } };
}

async function simulate(tool: ToolSpec, args: Structured, caller: McpCaller, deps: McpDeps): Promise<Structured> {
  const write = tool.write!;
  switch (write.by) {
    case "dryRun":
      return call(tool.route, args, caller, deps, { query: { dryRun: "true" } });
    case "jobDryRun":
      return call(tool.route, { ...args, dryRun: true }, caller, deps);
    case "read":
      return { current: await call(write.route, args, caller, deps) };
    case "none":
      return { transaction: false, costWei: "0", arguments: args };
  }
}

/** A commit: the token checked against these arguments, then the route called with it as Idempotency-Key. */
async function commit(
  tool: ToolSpec,
  args: Structured,
  planToken: string,
  caller: McpCaller,
  deps: McpDeps,
): Promise<Structured> {
  const checked = deps.planTokens.check(planToken, { key: caller.key, tool: tool.name, args });
  if (!checked.ok) throw new ToolError(checked.code, checked.message);
  const idempotency = { headers: { "Idempotency-Key": planToken } };
  // A voucher sends no transaction: its id, made from the token, makes a repeat sign nothing new.
  const sent = tool.write!.by === "none" && args.id === undefined ? { ...args, id: `0x${sha256(planToken)}` } : args;
  try {
    const answered = await callWithHeaders(tool.route, sent, caller, deps, idempotency);
    return {
      stage: "commit",
      ...awaitingApproval(answered.body),
      result: answered.body,
      ...(answered.replayed ? { replayed: true } : {}),
    };
  } catch (err) {
    if (!(tool.write?.tooLargeAsJob && isTooLarge(err))) throw err;
    const answered = await callWithHeaders("createJob", asJob(args), caller, deps, idempotency);
    return {
      stage: "commit",
      job: true,
      ...awaitingApproval(answered.body),
      result: answered.body,
      ...(answered.replayed ? { replayed: true } : {}),
    };
  }
}

/**
 * A write or a job its key's approval rule held (202 awaiting_approval; docs/approvals.md): said in
 * words for the agent, with the ids and the tool that follows it. Nothing was signed or sent.
 */
function awaitingApproval(body: Structured): Structured {
  if (body.status !== "awaiting_approval") return {};
  if (typeof body.jobId === "string") {
    const { approvalId, jobId } = body as { approvalId: string; jobId: string };
    return {
      awaitingApproval: true,
      approvalId,
      jobId,
      message: `Not started yet: this key's approval rule holds this job for a person's decision, one approval for all its rows. No batch is sent until someone with approvals:decide (another key) approves approval ${approvalId} or rejects it; result.plan is what they decide on. Follow it with get_job {"id":"${jobId}"}: awaiting_approval while it waits, running then completed once approved, cancelled with error.code APPROVAL_REJECTED or APPROVAL_EXPIRED otherwise. Calling again with this planToken answers the same.`,
      next: { tool: "get_job", arguments: { id: jobId } },
    };
  }
  const { approvalId, operationId } = body as { approvalId: string; operationId: string };
  return {
    awaitingApproval: true,
    approvalId,
    operationId,
    message: `Not sent yet: this key's approval rule holds this write for a person's decision. Nothing is signed until someone with approvals:decide (another key) approves approval ${approvalId} or rejects it; result.plan is what they decide on. Follow it with get_operation {"operationId":"${operationId}"}: awaiting_approval while it waits, confirmed once approved and mined, failed with APPROVAL_REJECTED or APPROVAL_EXPIRED otherwise. Calling again with this planToken answers the same; a new plan and commit would ask for a second approval.`,
    next: { tool: "get_operation", arguments: { operationId } },
  };
}

const isTooLarge = (err: unknown) => err instanceof ToolError && err.code === "TOO_LARGE_FOR_ONE_TRANSACTION";

/** An airdrop's arguments as a job's: on an edition contract, each row names the airdrop's edition. */
const asJob = ({ contractAddress, from, recipients, chain, tokenId }: Structured): Structured => ({
  kind: "airdrop",
  contractAddress,
  from,
  recipients:
    tokenId !== undefined && Array.isArray(recipients)
      ? recipients.map((r) => ({ ...(r as Structured), tokenId }))
      : recipients,
  ...(chain !== undefined ? { chain } : {}),
});

async function call(
  routeId: string,
  args: Structured,
  caller: McpCaller,
  deps: McpDeps,
  extra: { query?: Record<string, string> } = {},
): Promise<Structured> {
  return (await callWithHeaders(routeId, args, caller, deps, extra)).body;
}

/** Calls a route with the caller's key; its error answer becomes a ToolError with the same code. */
async function callWithHeaders(
  routeId: string,
  args: Structured,
  caller: McpCaller,
  deps: McpDeps,
  extra: { query?: Record<string, string>; headers?: Record<string, string> },
): Promise<{ body: Structured; replayed: boolean }> {
  const route = routeSchemas(routeId);
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(args[name] ?? "")));
  const query = new URLSearchParams(extra.query);
  const hasBody = route.method !== "get" && route.method !== "delete";
  const body: Structured = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined || key in route.params) continue;
    if (hasBody && (key in route.body || !(key in route.query))) body[key] = value;
    else query.set(key, typeof value === "string" ? value : JSON.stringify(value));
  }
  const search = query.toString();
  const answer = await deps.dispatch({
    method: route.method.toUpperCase(),
    url: `${path}${search ? `?${search}` : ""}`,
    body: hasBody ? body : undefined,
    headers: { authorization: `Bearer ${caller.key}`, ...extra.headers },
    clientAddress: caller.clientAddress,
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    parsed = undefined;
  }
  if (answer.status >= 400) {
    const error = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
    throw new ToolError(error?.code ?? "INTERNAL_ERROR", error?.message ?? `HTTP ${answer.status}`, error?.details);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
    throw new ToolError("INTERNAL_ERROR", "The route answered no JSON object");
  return { body: parsed as Structured, replayed: answer.headers["idempotent-replayed"] === "true" };
}

/** A commit's answer within the bound: a long result keeps its scalar fields (the rest: get_operation or get_job). */
function bounded(structured: Structured): Structured {
  if (JSON.stringify(structured).length * 2 < MAX_RESULT_CHARS - 200) return structured;
  const result = structured.result as Structured;
  const kept = Object.fromEntries(Object.entries(result).filter(([, value]) => typeof value !== "object"));
  return { ...structured, result: { ...kept, truncated: true } };
}

/** A tool's answer: the structured content, and the same JSON as text for clients that read only text. */
function answer(structured: Structured): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
}

function errorResult(code: string, message: string, details?: unknown): CallToolResult {
  const error = { code, message, ...(details !== undefined ? { details } : {}) };
  return { isError: true, content: [{ type: "text", text: JSON.stringify({ error }) }] };
}

/** An audit event naming the key and the tool, with what it made (never its arguments: `from` may be a secret). */
async function recordAudit(tool: ToolSpec, committed: Structured, caller: McpCaller, deps: McpDeps): Promise<void> {
  if (!deps.audit) return;
  const result = committed.result as Structured;
  const pick = (key: string) => (typeof result[key] === "string" ? { [key]: result[key] } : {});
  await deps.audit.log.record(
    deps.audit.db,
    { keyId: caller.principal.keyId, keyName: caller.principal.name, clientAddress: caller.clientAddress },
    {
      action: "mcp.tool_call",
      targetType: "mcp-tool",
      targetId: tool.name,
      details: {
        route: tool.route,
        ...pick("operationId"),
        ...pick("jobId"),
        ...pick("contractAddress"),
        ...(committed.replayed ? { replayed: true } : {}),
      },
    },
  );
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
