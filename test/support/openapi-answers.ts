/**
 * Every answer the tests see, held to docs/openapi.json (issue 64, "the document is the truth"):
 * its status is listed for the route and method, and a JSON body validates against that response's
 * schema. The test clients (ApiClient in test/api/harness.ts, the users' client) call
 * `checkAnswer` on each answer; one that does not fit throws, failing the test that got it with
 * the route, the status and the schema path.
 *
 * Paths the document does not list (/mcp, /console, /docs, unknown routes a test probes) are not
 * checked: the document says nothing of them. A body that is not JSON (the metrics' text, a CAR
 * file, an event stream) has only its status checked.
 *
 * Cheap enough for every answer of the suite: the document is read once, a schema is compiled on
 * its first use per (route, method, status), then kept.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";

type Json = Record<string, unknown>;

const DOCUMENT = path.resolve(__dirname, "..", "..", "docs", "openapi.json");
const DOC_ID = "https://nft-ops.test/openapi.json";
const METHODS = new Set(["get", "put", "post", "delete", "patch", "head", "options"]);

/** Path prefixes served outside the document, by design; listed so that the exclusions stay few and explicit. */
export const UNDOCUMENTED_PREFIXES = ["/mcp", "/console", "/docs"];

interface Route {
  template: string;
  pattern: RegExp;
  /** Literal segments first: /jobs/events is matched before /jobs/{id}. */
  rank: string;
  item: Json;
}

interface Loaded {
  doc: Json;
  routes: Route[];
  ajv: Ajv2020;
  compiled: Map<string, ValidateFunction>;
}

let loaded: Loaded | undefined;

function load(): Loaded {
  if (loaded) return loaded;
  const doc = JSON.parse(readFileSync(DOCUMENT, "utf8")) as Json;
  const routes = Object.entries(doc.paths as Record<string, Json>).map(([template, item]) => {
    const segments = template.split("/").slice(1);
    const pattern = new RegExp(
      `^/${segments.map((s) => (/^\{.+\}$/.test(s) ? "[^/]+" : s.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))).join("/")}$`,
    );
    return { template, pattern, rank: segments.map((s) => (s.startsWith("{") ? "1" : "0")).join(""), item };
  });
  routes.sort((a, b) => a.rank.localeCompare(b.rank));
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: false });
  addFormats(ajv);
  // OpenAPI's own keywords, and the document's top level, ride along as annotations.
  ajv.addVocabulary(["example", "discriminator", "xml", "externalDocs", "components", "paths"]);
  ajv.addSchema({ $id: DOC_ID, paths: doc.paths, components: doc.components });
  loaded = { doc, routes, ajv, compiled: new Map() };
  return loaded;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

export interface Answer {
  method: string;
  /** The request's path, with or without its query. */
  url: string;
  status: number;
  contentType: string | null;
  text: string;
}

/** What is wrong with `answer` by the document (empty: nothing, or a path the document does not list). */
export function answerProblems(answer: Answer): string[] {
  const { routes, ajv, compiled } = load();
  const pathname = new URL(answer.url, "http://x").pathname;
  if (UNDOCUMENTED_PREFIXES.some((p) => pathname === p || pathname.startsWith(`${p}/`))) return [];
  const route = routes.find((r) => r.pattern.test(pathname));
  if (!route) return [];
  const method = answer.method.toLowerCase();
  const where = `${answer.method.toUpperCase()} ${route.template} answered ${answer.status}`;
  const operation = route.item[method] as Json | undefined;
  if (!operation || !METHODS.has(method)) return [];
  const responses = (operation.responses ?? {}) as Record<string, Json>;
  const key = String(answer.status) in responses ? String(answer.status) : `${String(answer.status)[0]}XX`;
  const response = responses[key] ?? responses.default;
  if (!response)
    return [`${where}, a status the document does not list (it lists ${Object.keys(responses).join(", ")})`];
  const isJson = /^application\/(.+\+)?json\b/.test(answer.contentType ?? "");
  if (!isJson || answer.text === "") return [];
  const content = (response.content ?? {}) as Record<string, Json>;
  const media = Object.keys(content).find((type) => /^application\/(.+\+)?json$/.test(type));
  if (!media) return [`${where} with a JSON body, where the document lists no JSON content`];
  if (!content[media].schema) return [];
  const schemaPath = `#/paths/${pointer(route.template, method)}/responses/${key}/content/${pointer(media)}/schema`;
  let validate = compiled.get(schemaPath);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOC_ID}${schemaPath}` });
    compiled.set(schemaPath, validate);
  }
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return [`${where} with a body that is not JSON, though its type says so`];
  }
  if (validate(body)) return [];
  return (validate.errors ?? []).map(
    (e) =>
      `${where}: ${e.instancePath || "(body)"} ${e.message} (the schema at ${schemaPath}, keyword ${e.schemaPath})`,
  );
}

/** Throws when `answer` does not fit the document, naming the route, the status and the schema path. */
export function checkAnswer(answer: Answer): void {
  const problems = answerProblems(answer);
  if (problems.length === 0) return;
  // Not the body: it may carry a secret the route hands out (a new access key, a webhook's secret).
  throw new Error(`The answer does not fit docs/openapi.json:\n  ${problems.join("\n  ")}`);
}
