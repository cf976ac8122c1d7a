/**
 * Issue 64, "the document is the truth": every operation of docs/openapi.json is called against one
 * real service with requests drawn from the document's own schemas (fast-check, a fixed seed,
 * printed). A valid request (by the document) is never refused for a reason the document does not
 * give: a 4xx must be listed for the route with its code in the response's description. An invalid
 * one (one rule of its schema broken) is never accepted (never 2xx). No answer is 5xx, and every
 * answer is listed with a body valid against its schema (test/support/openapi-answers.ts).
 *
 * Values the document cannot tell from noise come from small pools beside the schema's own draw:
 * an address is also the walk's collection or its owner, a private key also the owner's (a random
 * one holds no ether), a chain also the one configured. `minBlock` stays at 0 or 1: past the index
 * it waits 5 s and answers 503 INDEX_BEHIND, which is documented but would eat the walk's time.
 */
import { expect } from "chai";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { ERROR_STATUS } from "../../server/http/errors";
import { answerProblems } from "../support/openapi-answers";
import { operationsOf } from "../support/openapi-checks";
import { ChainNode, DEV_KEYS, ServiceProcess, TEST_API_KEY } from "./harness";

type Json = Record<string, unknown>;
type Schema = Json;

const SEED = Number(process.env.WALK_SEED ?? 64_2026);
/** The walk's calls stop here (the service's start is not counted): under load the rest is skipped, saying which. */
const BUDGET_MS = 50_000;
/** Requests per operation, valid and invalid each. */
const RUNS = Number(process.env.WALK_RUNS ?? 4);
const DOC = JSON.parse(readFileSync(path.resolve(__dirname, "..", "..", "docs", "openapi.json"), "utf8")) as Json;
const SCHEMAS = (DOC.components as Json).schemas as Record<string, Schema>;
const DOC_ID = "https://nft-ops.test/walk.json";
const OWNER_KEY = DEV_KEYS[0];
const OWNER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
/**
 * Disagreements found and left for now, each with why: a problem it matches is printed, not failed.
 * The list is meant to shrink; a new disagreement fails the walk.
 */
const LEFT: Array<[RegExp, string]> = [];

/** Paths the walk leaves out, with why. */
const LEFT_OUT: Record<string, string> = {
  "GET /jobs/{id}/events": "an event stream that stays open until its job ends",
  "GET /v2/user/logout": "ends the session the users' routes share; it takes no input",
};

const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: false });
addFormats(ajv);
ajv.addVocabulary(["example", "discriminator", "xml", "externalDocs", "components", "paths"]);
ajv.addSchema({ $id: DOC_ID, paths: DOC.paths, components: DOC.components });
const validators = new Map<string, ValidateFunction>();
/** Whether `value` fits the schema at `pointer` (a JSON pointer into the document). */
function fits(pointer: string, value: unknown): boolean {
  let validate = validators.get(pointer);
  if (!validate) validators.set(pointer, (validate = ajv.compile({ $ref: `${DOC_ID}#${pointer}` })));
  return validate(value);
}
const escape = (p: string) => p.replace(/~/g, "~0").replace(/\//g, "~1");

const resolve = (schema: Schema): Schema =>
  typeof schema.$ref === "string" ? resolve(SCHEMAS[schema.$ref.split("/").pop()!]) : schema;

interface Pools {
  addresses: string[];
  chain: (string | number)[];
}

/** A fast-check arbitrary of values valid by `schema`, for the subset of JSON Schema the document uses. */
function valid(input: Schema, pools: Pools, name = ""): fc.Arbitrary<unknown> {
  const schema = resolve(input);
  if (name === "minBlock") return fc.integer({ min: 0, max: 1 });
  if (name === "chain") return fc.oneof(fc.constantFrom(...pools.chain), plain(schema, pools, name));
  if (name === "privateKey" && schema.type === "string") return fc.oneof(fc.constant(OWNER_KEY), plain(schema, pools));
  return plain(schema, pools, name);
}

function plain(schema: Schema, pools: Pools, name = ""): fc.Arbitrary<unknown> {
  if ("const" in schema) return fc.constant(schema.const);
  // An object's anyOf/oneOf of `required` lists: its properties drawn, the rule checked by Ajv.
  if (schema.properties) return ofType("object", schema, pools, name);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  for (const key of ["anyOf", "oneOf"])
    if (Array.isArray(schema[key])) return fc.oneof(...(schema[key] as Schema[]).map((s) => valid(s, pools, name)));
  if (Array.isArray(schema.allOf)) {
    // The document's allOf joins an object with a ref; the first object branch is drawn, the rest checked by Ajv.
    return valid((schema.allOf as Schema[])[0], pools, name);
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  return fc.oneof(...types.map((type) => ofType(type, schema, pools, name)));
}

function ofType(type: string, schema: Schema, pools: Pools, name: string): fc.Arbitrary<unknown> {
  switch (type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
    case "number": {
      const min = (schema.minimum as number | undefined) ?? -1e6;
      const max = (schema.maximum as number | undefined) ?? Math.max(min, 0) + 1e6;
      // Both ends and small values are where the rules are.
      return fc.oneof(
        fc.constantFrom(min, max),
        fc.integer({ min: Math.max(min, -1e9), max: Math.min(max, Math.max(min, 0) + 1000) }),
        fc.integer({ min: Math.max(min, Number.MIN_SAFE_INTEGER), max: Math.min(max, Number.MAX_SAFE_INTEGER) }),
      );
    }
    case "string": {
      if (schema.pattern === "^0x[0-9a-fA-F]{40}$")
        return fc.oneof(fc.constantFrom(...pools.addresses), fc.stringMatching(/^0x[0-9a-f]{40}$/));
      // Any unsigned integer's pattern: its description bounds it below 2^256.
      if (schema.pattern === "^[0-9]{1,78}$") return fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }).map(String);
      // A webhook's url: a public address would be fetched; the guard's answer is documented (400 WEBHOOK_URL_FORBIDDEN).
      if (schema.format === "uri") return fc.constantFrom("http://127.0.0.1:9/hook", "https://example.test/hook");
      if (schema.format === "date-time")
        return fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString());
      const minLength = (schema.minLength as number | undefined) ?? 0;
      const maxLength = Math.min((schema.maxLength as number | undefined) ?? 40, minLength + 40);
      // An address in a pattern is drawn lower-case: a mixed-case one must be checksummed (its description).
      if (typeof schema.pattern === "string")
        return fc
          .stringMatching(new RegExp(schema.pattern))
          .map((s) => s.replace(/0x[0-9a-fA-F]{40}/g, (a) => a.toLowerCase()))
          .filter((s) => s.length >= minLength && s.length <= ((schema.maxLength as number | undefined) ?? Infinity));
      return fc.string({ unit: "grapheme-ascii", minLength, maxLength });
    }
    case "array": {
      const items = (schema.items as Schema | undefined) ?? {};
      const minLength = (schema.minItems as number | undefined) ?? 0;
      const maxLength = Math.min((schema.maxItems as number | undefined) ?? 3, minLength + 3);
      return fc.array(valid(items, pools, name), { minLength, maxLength });
    }
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required ?? []) as string[];
      const model = Object.fromEntries(Object.entries(properties).map(([key, s]) => [key, valid(s, pools, key)]));
      return fc.record(model, { requiredKeys: required.filter((key) => key in model) });
    }
    default:
      // An empty schema: anything JSON.
      return fc.oneof(fc.string(), fc.integer(), fc.boolean());
  }
}

/** Values that break one rule of `schema` (type, bounds, length, pattern, enum); each is checked by Ajv before use. */
function breaking(input: Schema, inQuery: boolean): unknown[] {
  const schema = resolve(input);
  const out: unknown[] = inQuery ? ["!", "-1", "1.5", "x".repeat(300)] : [true, [], {}, "!", -1, 1.5];
  for (const s of [schema, ...((schema.anyOf ?? schema.oneOf ?? []) as Schema[]).map(resolve)]) {
    if (typeof s.maxLength === "number") out.push("a".repeat(s.maxLength + 1));
    if (typeof s.minLength === "number" && s.minLength > 0) out.push("");
    if (typeof s.maximum === "number") out.push(inQuery ? String(s.maximum + 1) : s.maximum + 1);
    if (typeof s.minimum === "number") out.push(inQuery ? String(s.minimum - 1) : s.minimum - 1);
    if (typeof s.maxItems === "number" && !inQuery) out.push(Array.from({ length: s.maxItems + 1 }, () => "1"));
    if (s.minProperties !== undefined && !inQuery) out.push({});
  }
  if (!inQuery) out.push(null, "1e400", 2 ** 53 + 2);
  return out;
}

interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  schema: Schema;
}

interface Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: unknown;
}

/** What a call is: which rule was broken (none: valid). */
interface Call {
  request: Request;
  broken?: string;
}

const ROOT = { authorization: `Bearer ${TEST_API_KEY}` };

/**
 * The rules JSON Schema cannot state, each in its field's description: a valid request refused with
 * 400 VALIDATION_ERROR naming one of these is refused as documented. By route, the detail paths
 * and what the description says.
 */
const CURSOR = "the `cursor` of the previous page, as it gave it (any other string is refused)";
const EDITION = "tokenId: required on an ERC-1155 editions contract, refused on an ERC-721 collection";
const DESCRIBED_RULES: Record<string, Record<string, string>> = {
  "*": { cursor: CURSOR },
  "POST /access-keys": { expiresAt: "in the future" },
  "POST /nft/mint": { tokenId: EDITION },
  "POST /nft/mintForFree": { tokenId: EDITION },
  "POST /nft/airdrop": { tokenId: EDITION },
  "POST /nft/setCost": { tokenId: EDITION },
  "POST /nft/setPaused": { tokenId: EDITION },
  "POST /nft/total-supply": { tokenId: EDITION },
  "GET /collections/{address}/owners": { tokenId: "ERC-1155 only (its description); the walk's collection is ERC-721" },
  "POST /webhooks": { url: "its host resolves (its description): the walk's https://example.test/hook never does" },
  "PATCH /webhooks/{id}": { url: "its host resolves (its description)" },
  "POST /wallets": { kind: "pkcs11: needs a PKCS#11 token configured (PKCS11_MODULE, PKCS11_TOKEN_LABEL, PKCS11_PIN)" },
  "POST /nft/createEdition": {
    contractAddress: "an ERC-1155 edition contract (the route's summary); the walk's is ERC-721",
  },
};

/** Whether every detail of a 400 names a rule its field's description gives (DESCRIBED_RULES). */
function described(route: string, text: string): boolean {
  const rules = { ...DESCRIBED_RULES["*"], ...DESCRIBED_RULES[route] };
  if (/^\w+ \/collections\/\{address\}\//.test(route)) rules.contractAddress = "when given, the path's {address}";
  const details = ((JSON.parse(text) as { error?: { details?: { path: string }[] } }).error?.details ?? []).map(
    (d) => d.path,
  );
  return details.length > 0 && details.every((path) => path in rules);
}

/** The codes a response's description lists ("CONTRACT_NOT_FOUND, WALLET_NOT_FOUND"). */
function listedCodes(response: Json | undefined): string[] {
  const words = String(response?.description ?? "").match(/[A-Z][A-Z0-9_]+/g) ?? [];
  return words.filter((w) => w in ERROR_STATUS);
}

describe("the OpenAPI document walked with requests drawn from its own schemas (issue 64)", function () {
  let node: ChainNode;
  let service: ServiceProcess;
  let pools: Pools;

  before(async function () {
    this.timeout(120_000);
    node = await ChainNode.start();
    service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, stdout: "ignore" });
    const res = await fetch(`${service.url}/nft/deploy`, {
      method: "POST",
      headers: { ...ROOT, "content-type": "application/json" },
      body: JSON.stringify({ privateKey: OWNER_KEY }),
    });
    const deployed = (await res.json()) as Json;
    expect(res.status, JSON.stringify(deployed)).to.equal(201);
    pools = { addresses: [deployed.contractAddress as string, OWNER], chain: ["31337", 31337] };
  });

  after(async function () {
    this.timeout(30_000);
    await service?.stop();
    await node?.stop();
  });

  it("every operation: a valid request refused only as documented, an invalid one never accepted, no 5xx, each answer in the document", async function () {
    this.timeout(120_000);
    const started = Date.now();
    console.log(
      `      walk seed ${SEED} (WALK_SEED=${SEED} repeats it), ${RUNS} valid and ${RUNS} invalid per operation`,
    );
    const problems: string[] = [];
    let calls = 0;
    const skipped: string[] = [];
    for (const [i, { method, path: template }] of operationsOf(DOC).entries()) {
      const route = `${method.toUpperCase()} ${template}`;
      if (route in LEFT_OUT) continue;
      if (Date.now() - started > BUDGET_MS) {
        skipped.push(route);
        continue;
      }
      const op = (DOC.paths as Record<string, Json>)[template][method] as Json;
      const where = `/paths/${escape(template)}/${method}`;
      const parameters = ((op.parameters ?? []) as Parameter[]).filter((p) => p.in !== "header" || p.required);
      const media = ((op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined)?.[
        "application/json"
      ];
      const responses = op.responses as Record<string, Json>;

      const paramArbs = Object.fromEntries(
        parameters.map((p) => [`${p.in}:${p.name}`, valid(p.schema, pools, p.name)] as const),
      );
      const requestArb = fc.record({
        params: fc.record(paramArbs, {
          requiredKeys: parameters.filter((p) => p.required || p.in === "path").map((p) => `${p.in}:${p.name}`),
        }),
        body: media ? valid(media.schema as Schema, pools) : fc.constant(undefined),
      });

      /**
       * A path segment is never empty: such a request is another route's (/jobs/ is GET /jobs). Nor
       * is it "." or "..": a URL resolves those (even as %2e) before any request is sent.
       */
      const expressible = (params: Record<string, unknown>) =>
        Object.entries(params).every(
          ([key, value]) => !key.startsWith("path:") || !["", ".", ".."].includes(String(value)),
        );
      const build = (params: Record<string, unknown>, body: unknown): Request => {
        let url = template;
        const query = new URLSearchParams();
        const headers: Record<string, string> = { ...ROOT };
        for (const [key, value] of Object.entries(params)) {
          const [at, name] = key.split(":");
          if (at === "path") url = url.replace(`{${name}}`, encodeURIComponent(String(value)));
          else if (at === "query") query.set(name, String(value));
          else headers[name] = String(value);
        }
        if (media) headers["content-type"] = "application/json";
        const q = query.toString();
        return { method: method.toUpperCase(), path: q ? `${url}?${q}` : url, headers, body };
      };
      /** Whether a request fits the document: each parameter its schema, the body its schema. */
      const isValid = (params: Record<string, unknown>, body: unknown): boolean =>
        parameters.every((p, j) => {
          const key = `${p.in}:${p.name}`;
          if (!(key in params)) return !p.required;
          return fits(`${where}/parameters/${j}/schema`, params[key]);
        }) &&
        (!media || fits(`${where}/requestBody/content/application~1json/schema`, body));

      const send = async ({ request, broken }: Call): Promise<string[]> => {
        calls++;
        const res = await fetch(`${service.url}${request.path}`, {
          method: request.method,
          headers: request.headers,
          body: request.body === undefined ? undefined : JSON.stringify(request.body),
          signal: AbortSignal.timeout(30_000),
        });
        const text = await res.text();
        const what =
          `${route} ${broken ? `(invalid: ${broken})` : "(valid)"} ${request.path} ${JSON.stringify(request.body) ?? ""}`.slice(
            0,
            400,
          );
        const found = answerProblems({
          method: request.method,
          url: request.path,
          status: res.status,
          contentType: res.headers.get("content-type"),
          text,
        }).map((p) => `${p}\n      for ${what}`);
        const code = /"code":"([A-Z_]+)"/.exec(text)?.[1];
        if (res.status >= 500) found.push(`${route} answered ${res.status} ${code ?? ""}\n      for ${what}`);
        if (broken && res.status < 300)
          found.push(`${route} accepted an invalid request: ${res.status}\n      for ${what}`);
        if (!broken && res.status >= 400 && res.status < 500) {
          const listed = listedCodes(responses[String(res.status)]);
          // VALIDATION_ERROR on a request the document calls valid: a rule the schema does not state.
          if (code === "VALIDATION_ERROR" && !described(route, text))
            found.push(`${route} refused a valid request: ${text.slice(0, 300)}\n      for ${what}`);
          else if (code && !listed.includes(code))
            found.push(
              `${route} refused a valid request with ${res.status} ${code}, not listed (${listed.join(", ")}): ${text.slice(0, 200)}\n      for ${what}`,
            );
        }
        return found;
      };

      // Valid requests: drawn, kept only if Ajv agrees (the draw is a little wider than the document in places).
      const seed = SEED + i;
      const drawn = fc
        .sample(requestArb, { seed, numRuns: RUNS * 8 })
        .filter((r) => expressible(r.params) && isValid(r.params, r.body));
      for (const { params, body } of drawn.slice(0, RUNS))
        problems.push(...(await send({ request: build(params, body) })));

      // Invalid requests: one valid request with one rule broken (a parameter, a body field, a required field left out).
      const base = drawn[0];
      if (!base) {
        problems.push(`${route}: the walk drew no valid request from its schemas`);
        continue;
      }
      const invalid: Call[] = [];
      for (const p of parameters) {
        for (const bad of breaking(p.schema, p.in !== "header")) {
          const params = { ...base.params, [`${p.in}:${p.name}`]: bad };
          if (expressible(params) && !isValid(params, base.body))
            invalid.push({
              request: build(params, base.body),
              broken: `${p.name}=${JSON.stringify(bad).slice(0, 40)}`,
            });
        }
      }
      if (media) {
        const schema = resolve(media.schema as Schema);
        const props = (schema.properties ?? {}) as Record<string, Schema>;
        const body = (base.body ?? {}) as Json;
        for (const req of (schema.required ?? []) as string[]) {
          const { [req]: _gone, ...rest } = body;
          if (!isValid(base.params, rest)) invalid.push({ request: build(base.params, rest), broken: `no ${req}` });
        }
        for (const [key, s] of Object.entries(props))
          for (const bad of breaking(s, false)) {
            const next = { ...body, [key]: bad };
            if (!isValid(base.params, next))
              invalid.push({ request: build(base.params, next), broken: `${key}=${JSON.stringify(bad).slice(0, 40)}` });
          }
        for (const bad of [{}, [], "x"])
          if (!isValid(base.params, bad))
            invalid.push({ request: build(base.params, bad), broken: `body ${JSON.stringify(bad)}` });
      }
      // A seeded choice among the broken rules, so that each run stays bounded.
      const chosen =
        fc.sample(
          fc.shuffledSubarray(invalid, {
            minLength: Math.min(invalid.length, RUNS * 2),
            maxLength: Math.min(invalid.length, RUNS * 2),
          }),
          { seed, numRuns: 1 },
        )[0] ?? [];
      for (const call of chosen) problems.push(...(await send(call)));
    }
    console.log(`      walk: ${calls} calls in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (skipped.length > 0)
      console.log(`      past the ${BUDGET_MS / 1000} s budget, not walked: ${skipped.join(", ")}`);
    const left = problems.filter((p) => LEFT.some(([pattern]) => pattern.test(p)));
    for (const p of left) console.log(`      left (see LEFT): ${p.split("\n")[0]}`);
    problems.splice(0, problems.length, ...problems.filter((p) => !left.includes(p)));
    expect(problems, `${problems.length} disagreements with the document (seed ${SEED})`).to.deep.equal([]);
  });
});
