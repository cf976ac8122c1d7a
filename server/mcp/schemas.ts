import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { z } from "zod";
import { routeSchemas } from "./route-schemas";
import type { ToolSpec } from "./tools";

/** JSON Schema of an object, as tools/list shows it. */
export type JsonObjectSchema = Record<string, unknown> & { type: "object" };

/** The SDK's schema face over a JSON Schema, passing every argument through: the route checks them, with its own 400s. */
export function passThrough(json: JsonObjectSchema): StandardSchemaWithJSON<Record<string, unknown>> {
  return {
    "~standard": {
      version: 1,
      vendor: "nft-ops",
      validate: (value) =>
        value !== null && typeof value === "object" && !Array.isArray(value)
          ? { value: value as Record<string, unknown> }
          : { issues: [{ message: "arguments must be an object" }] },
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

/** The field that makes a write send (without it, the tool plans). */
const planToken = z
  .string()
  .min(1)
  .max(255)
  .optional()
  .describe(
    "Absent: the call only plans (simulates) and answers a planToken. The planToken of a plan made with exactly these arguments: sends it (once, however often repeated).",
  );

/**
 * The route field that names the collection where the tool says `contractAddress` (a collection is
 * contractAddress in every tool): a `/collections/{address}` path's `address`, or the tool's own.
 */
export function collectionAlias(tool: ToolSpec): string | undefined {
  if (routeSchemas(tool.route).path.startsWith("/collections/{address}")) return "address";
  return tool.collectionField;
}

/** A tool's arguments as its route takes them: `contractAddress` under the route's own name for it. */
export function routeArguments(tool: ToolSpec, args: Record<string, unknown>): Record<string, unknown> {
  const alias = collectionAlias(tool);
  if (!alias || args.contractAddress === undefined) return args;
  const { contractAddress, ...rest } = args;
  const keep = "contractAddress" in routeSchemas(tool.route).body ? { contractAddress } : {};
  return { ...rest, ...keep, [alias]: contractAddress };
}

/**
 * A tool's input: its route's path, query and body fields (body last), less `privateKey` (an agent
 * never handles key material) and what the tool leaves out; the collection as `contractAddress`;
 * `from` required for a write; the tool's own bounds; `planToken` for a write.
 */
export function toolInput(tool: ToolSpec): z.ZodObject {
  const route = routeSchemas(tool.route);
  const fields: Record<string, z.core.$ZodType> = { ...route.query, ...route.params, ...route.body };
  const alias = collectionAlias(tool);
  if (alias && fields[alias]) {
    fields.contractAddress ??= fields[alias];
    delete fields[alias];
  }
  const merged = z.object(fields);
  const dropped = ["privateKey", ...(tool.omit ?? [])].filter((key) => key in merged.shape);
  let input = merged.omit(Object.fromEntries(dropped.map((key) => [key, true])) as never) as z.ZodObject;
  if (tool.write) {
    const from = input.shape.from;
    if (from instanceof z.ZodOptional) input = input.extend({ from: from.unwrap() as z.ZodType });
    input = input.extend({ planToken });
  }
  return tool.extend ? input.extend(tool.extend) : input;
}

const inputs = new Map<string, z.ZodObject>();

/** A tool's input schema, made once: what tools/list shows, and what every call is checked against first. */
export function toolInputOnce(tool: ToolSpec): z.ZodObject {
  let input = inputs.get(tool.name);
  if (!input) inputs.set(tool.name, (input = toolInput(tool)));
  return input;
}

/** A zod schema as tools/list shows it: the input side (what a client sends), no `$schema`. */
export function jsonSchemaOf(schema: z.ZodType): JsonObjectSchema {
  const { $schema: _dropped, ...json } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  return json as JsonObjectSchema;
}

/** What a write tool answers: a plan, or what its route answered once sent. */
export const WriteOutput = z.object({
  stage: z.enum(["plan", "commit"]),
  planToken: z.string().optional().describe("stage plan: call the tool again with it and the same arguments to send"),
  expiresAt: z.string().optional(),
  plan: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("The simulation: call, gas, maxFeePerGas, costWei (wei) and the result it shows"),
  result: z.record(z.string(), z.unknown()).optional().describe("stage commit: the route's answer"),
  replayed: z.boolean().optional().describe("true: sent before with this planToken; nothing sent again"),
  job: z.boolean().optional().describe("true: too large for one transaction, run as a job: follow with get_job"),
  approvalRequired: z
    .boolean()
    .optional()
    .describe(
      "stage plan, true: this key's approval rule holds this write (or job); its commit will await a person's approval",
    ),
  awaitingApproval: z
    .boolean()
    .optional()
    .describe(
      "stage commit, true: held for a person's approval (result.status awaiting_approval, result.plan); nothing sent yet: follow with get_operation (a job: get_job)",
    ),
  approvalId: z.string().optional().describe("awaitingApproval: the approval a person approves or rejects"),
  operationId: z.string().optional().describe("awaitingApproval: get_operation follows it"),
  jobId: z.string().optional().describe("awaitingApproval of a job: get_job follows it"),
  next: z
    .object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()) })
    .optional()
    .describe("awaitingApproval: the tool call that follows it"),
  message: z.string().optional().describe("What the answer means, in words, where more than its fields"),
});

/** The output schema of a tool: its route's answer for a read, WriteOutput for a write. */
export function toolOutput(tool: ToolSpec): JsonObjectSchema {
  const response = routeSchemas(tool.route).response;
  if (tool.write) return jsonSchemaOf(WriteOutput);
  const json = response ? jsonSchemaOf(response) : undefined;
  return json?.type === "object" ? json : { type: "object", additionalProperties: true };
}
