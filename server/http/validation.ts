import { z } from "zod";
import { ApiError } from "./errors";

interface Detail {
  path: string;
  message: string;
}

/** Parses `input` with `schema`, or throws 400 VALIDATION_ERROR naming each bad field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw invalid(issueDetails(result.error.issues));
}

/**
 * Parses a JSON request body with `schema`, refusing any top-level field the schema does not
 * declare (400 VALIDATION_ERROR naming it): a field a route does not know (a misspelling, one of a
 * later version) is never dropped in silence. The routers of /nft, /wallets, /access-keys,
 * /webhooks and /collections read bodies with it; the demo users keep Petstore's leniency.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  let declared = DECLARED.get(schema);
  if (declared === undefined) DECLARED.set(schema, (declared = declaredFields(schema)));
  const unknown =
    declared && typeof body === "object" && body !== null && !Array.isArray(body)
      ? Object.keys(body).filter((field) => !declared.has(field))
      : [];
  const result = schema.safeParse(body);
  if (result.success && unknown.length === 0) return result.data;
  const takes = declared ? `this route takes ${[...declared].join(", ")}` : "";
  const details = unknown.map((field) => ({ path: field, message: `unknown field (${takes})` }));
  if (!result.success)
    for (const detail of issueDetails(result.error.issues, takes))
      if (!details.some((d) => d.path === detail.path)) details.push(detail);
  throw invalid(details);
}

/** Each body schema's fields, walked once. */
const DECLARED = new WeakMap<z.ZodType, Set<string> | null>();

/** 400 VALIDATION_ERROR naming each bad field (`details`) in its message. */
export function invalid(details: Detail[]): ApiError {
  return new ApiError(
    "VALIDATION_ERROR",
    `Invalid request: ${details.map((d) => `${d.path}: ${d.message}`).join("; ")}`,
    details,
  );
}

/** One detail per issue; a strict object's unknown keys, one per key, named by their path. */
function issueDetails(issues: z.core.$ZodIssue[], takes = ""): Detail[] {
  return issues.flatMap((issue) => {
    const at = issue.path.map(String);
    if (issue.code === "unrecognized_keys")
      return issue.keys.map((key) => ({
        path: [...at, key].join("."),
        message: takes ? `unknown field (${takes})` : "unknown field",
      }));
    return [{ path: at.join(".") || "(body)", message: issue.message }];
  });
}

/**
 * The top-level fields an object schema declares, through the wrappers a route's body may have
 * (refinements, unions of objects, optional, pipes); null when any field is welcome (a record, an
 * object with a catch-all) or the schema is not an object.
 */
function declaredFields(schema: z.core.$ZodType): Set<string> | null {
  const def = schema._zod.def as z.core.$ZodTypeDef & {
    shape?: Record<string, unknown>;
    catchall?: z.core.$ZodType;
    options?: z.core.$ZodType[];
    innerType?: z.core.$ZodType;
    in?: z.core.$ZodType;
    out?: z.core.$ZodType;
    left?: z.core.$ZodType;
    right?: z.core.$ZodType;
  };
  switch (def.type) {
    case "object":
      if (def.catchall && def.catchall._zod.def.type !== "never") return null;
      return new Set(Object.keys(def.shape ?? {}));
    case "union": {
      const all = new Set<string>();
      for (const option of def.options ?? []) {
        const fields = declaredFields(option);
        if (!fields) return null;
        for (const field of fields) all.add(field);
      }
      return all;
    }
    case "intersection": {
      const [left, right] = [declaredFields(def.left!), declaredFields(def.right!)];
      return left && right ? new Set([...left, ...right]) : null;
    }
    case "pipe":
      return declaredFields(def.in!) ?? declaredFields(def.out!);
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "catch":
    case "nonoptional":
      return declaredFields(def.innerType!);
    default:
      return null;
  }
}
