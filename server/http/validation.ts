import { z } from "zod";
import { ApiError } from "./errors";

interface Detail {
  path: string;
  message: string;
}

/** Parses `input` with `schema`, or throws 400 VALIDATION_ERROR naming each bad field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input, IN_WORDS);
  if (result.success) return result.data;
  throw invalid(issueDetails(result.error.issues, schema));
}

/** `input` parsed by `schema`, or the details of each bad field in the same words parseInput uses (for a caller that gathers them). */
export function checkInWords<S extends z.ZodType>(
  schema: S,
  input: unknown,
): { success: true; data: z.output<S> } | { success: false; details: Detail[] } {
  const result = schema.safeParse(input, IN_WORDS);
  if (result.success) return { success: true, data: result.data };
  return { success: false, details: issueDetails(result.error.issues, schema) };
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
  const result = schema.safeParse(body, IN_WORDS);
  if (result.success && unknown.length === 0) return result.data;
  const takes = declared ? `this route takes ${[...declared].join(", ")}` : "";
  const details = unknown.map((field) => ({ path: field, message: `unknown field (${takes})` }));
  if (!result.success)
    for (const detail of issueDetails(result.error.issues, schema, takes))
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
function issueDetails(issues: z.core.$ZodIssue[], schema: z.core.$ZodType, takes = ""): Detail[] {
  return issues.flatMap((issue, i) => {
    const at = issue.path.map(String);
    if (issue.code === "unrecognized_keys")
      return issue.keys.map((key) => ({
        path: [...at, key].join("."),
        message: takes ? `unknown field (${takes})` : "unknown field",
      }));
    // Past 2^53 an integer fails both `.int()` and a `.max()`: the second says it (once).
    if (issue.code === "too_big" && issue.origin === "int" && issues.some((o, j) => j !== i && samePath(o, issue)))
      return [];
    return [{ path: at.join(".") || "(body)", message: finalWords(issue, schemaAt(schema, issue.path)) }];
  });
}

const samePath = (a: z.core.$ZodIssue, b: z.core.$ZodIssue) => a.path.join("\0") === b.path.join("\0");

/**
 * Zod's own messages ("Invalid input: expected string, received undefined") in words that say
 * what to send: "required", "must be an integer", the allowed range. A schema's own message wins
 * (zod applies this map only where a schema gives none).
 */
const IN_WORDS = { error: (issue: z.core.$ZodRawIssue) => issueWords(issue) };

function issueWords(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "required";
      if (issue.expected === "int") return "must be an integer";
      // A query's `?limit=abc`, coerced: NaN is the coercion's, not the caller's.
      if (typeof issue.input === "number" && Number.isNaN(issue.input)) return `must be ${article(issue.expected)}`;
      return `must be ${article(issue.expected)}, not ${issue.input === null ? "null" : article(kindOf(issue.input))}`;
    case "invalid_union":
      return issue.input === undefined ? "required" : undefined;
    case "too_small":
    case "too_big":
      return bound(
        issue.code,
        issue.origin,
        issue.code === "too_small" ? issue.minimum : issue.maximum,
        issue.inclusive,
      );
    case "invalid_value":
      if (issue.input === undefined) return "required";
      return `must be ${issue.values.length === 1 ? "" : "one of "}${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    default:
      return undefined;
  }
}

/** One bound's words: "must be at least 1", "must be at most 64 characters long". */
function bound(code: "too_small" | "too_big", origin: string, value: unknown, inclusive = true): string {
  const limit = String(value);
  if (origin === "int" && code === "too_big") return `must be an integer of at most ${limit} (2^53 - 1)`;
  const side = code === "too_small" ? (inclusive ? "at least" : "greater than") : inclusive ? "at most" : "less than";
  if (origin === "string") return `must be ${side} ${limit} characters long`;
  if (origin === "array" || origin === "set") return `must have ${side} ${limit} items`;
  return `must be ${side} ${limit}`;
}

/**
 * What only the schema knows, added to an issue's words: both ends of a range ("must be from 1 to
 * 10"), and, for a value that fits none of a union's forms, the form it was closest to.
 */
function finalWords(issue: z.core.$ZodIssue, schema: z.core.$ZodType | undefined): string {
  if (issue.code === "invalid_union" && (issue.message === "Invalid input" || allRequired(issue)))
    return unionWords(issue, schema);
  if ((issue.code === "too_small" || issue.code === "too_big") && schema) {
    const single = bound(
      issue.code,
      issue.origin,
      issue.code === "too_small" ? issue.minimum : issue.maximum,
      issue.inclusive,
    );
    if (issue.message === single) return rangeOf(schema, issue.origin) ?? single;
  }
  return issue.message;
}

function unionWords(issue: z.core.$ZodIssue & { code: "invalid_union" }, schema: z.core.$ZodType | undefined): string {
  const branches = issue.errors;
  if (allRequired(issue)) return "required";
  const options = (unwrap(schema)?._zod.def as { options?: z.core.$ZodType[] } | undefined)?.options;
  // The form whose type the value had: its own refusal says what is wrong ("must be an integer").
  const matched = branches.findIndex(
    (b) => b.length > 0 && !b.every((i) => i.code === "invalid_type" && i.path.length === 0 && i.expected !== "int"),
  );
  if (matched >= 0) {
    const inner = branches[matched][0];
    return finalWords(inner, options?.[matched] && schemaAt(options[matched], inner.path));
  }
  const expected = branches.flatMap((b) => b.flatMap((i) => (i.code === "invalid_type" ? [article(i.expected)] : [])));
  return expected.length > 0 ? `must be ${[...new Set(expected)].join(" or ")}` : issue.message;
}

/** A union's value was missing: every form refused it as "required". */
function allRequired(issue: z.core.$ZodIssue & { code: "invalid_union" }): boolean {
  return (
    issue.errors.length > 0 && issue.errors.every((b) => b.some((i) => i.message === "required" && i.path.length === 0))
  );
}

/** "must be from 1 to 10", when the schema bounds both ends; undefined otherwise. */
function rangeOf(schema: z.core.$ZodType, origin: string): string | undefined {
  const checks = (unwrap(schema)?._zod.def.checks ?? []).map((c) => c._zod.def as unknown as Record<string, unknown>);
  const length = origin === "string" || origin === "array" || origin === "set";
  const low = checks.find((c) => c.check === (length ? "min_length" : "greater_than"));
  const high = checks.find((c) => c.check === (length ? "max_length" : "less_than"));
  if (!low || !high) return undefined;
  const [min, max] = length ? [low.minimum, high.maximum] : [low.value, high.value];
  if (!length && (low.inclusive === false || high.inclusive === false))
    return `must be ${low.inclusive === false ? "greater than" : "at least"} ${String(min)} and ${high.inclusive === false ? "less than" : "at most"} ${String(max)}`;
  if (origin === "string") return `must be from ${String(min)} to ${String(max)} characters long`;
  if (length) return `must have from ${String(min)} to ${String(max)} items`;
  return `must be from ${String(min)} to ${String(max)}`;
}

/** The schema a path leads to, through objects, arrays, records, tuples and the wrappers around them. */
function schemaAt(schema: z.core.$ZodType, path: PropertyKey[]): z.core.$ZodType | undefined {
  let at: z.core.$ZodType | undefined = schema;
  for (const key of path) {
    const def = unwrapObject(at)?._zod.def as
      | (z.core.$ZodTypeDef & {
          shape?: Record<string, z.core.$ZodType>;
          element?: z.core.$ZodType;
          valueType?: z.core.$ZodType;
          items?: z.core.$ZodType[];
        })
      | undefined;
    if (!def) return undefined;
    if (def.type === "object") at = def.shape?.[String(key)];
    else if (def.type === "array") at = def.element;
    else if (def.type === "record") at = def.valueType;
    else if (def.type === "tuple") at = def.items?.[Number(key)];
    else return undefined;
  }
  return at;
}

type Wrapped = z.core.$ZodTypeDef & {
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
  left?: z.core.$ZodType;
  options?: z.core.$ZodType[];
};

/** The schema under optional, nullable, default, pipe (its input) and the like. */
function unwrap(schema: z.core.$ZodType | undefined): z.core.$ZodType | undefined {
  for (let at = schema, i = 0; at && i < 20; i++) {
    const def = at._zod.def as Wrapped;
    if (def.innerType) at = def.innerType;
    else if (def.type === "pipe" && def.in) at = def.in;
    else return at;
  }
  return undefined;
}

/** As unwrap, and into the first object of a union or an intersection (a body's fields). */
function unwrapObject(schema: z.core.$ZodType | undefined): z.core.$ZodType | undefined {
  const at = unwrap(schema);
  const def = at?._zod.def as Wrapped | undefined;
  if (def?.type === "union") return def.options?.map(unwrapObject).find((o) => o?._zod.def.type === "object");
  if (def?.type === "intersection") return unwrapObject(def.left);
  return at;
}

const article = (kind: string) => (/^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`);

const kindOf = (input: unknown): string => (Array.isArray(input) ? "array" : typeof input);

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
