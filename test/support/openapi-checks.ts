/**
 * Reading an OpenAPI 3.1 document as a client would: its operations, and every value it shows
 * beside a schema (examples, defaults), checked with a JSON Schema 2020-12 validator (Ajv).
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";

type Json = Record<string, unknown>;

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

export interface DocumentedOperation {
  method: string;
  path: string;
  operationId?: string;
}

/** Every operation of the document, as METHOD path and its operationId. */
export function operationsOf(doc: object): DocumentedOperation[] {
  const paths = ((doc as Json).paths ?? {}) as Record<string, Json>;
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method, path, operationId: (op as Json).operationId as string | undefined })),
  );
}

/** A value the document shows, the schema it must satisfy, and where it stands (a JSON pointer). */
export interface DocumentedValue {
  where: string;
  schema: object;
  value: unknown;
}

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Every `example`, `examples` entry and `default` of a schema and of its subschemas. */
function* schemaValues(schema: unknown, where: string): Generator<DocumentedValue> {
  if (!isObject(schema)) return;
  if ("example" in schema) yield { where: `${where}/example`, schema, value: schema.example };
  if (Array.isArray(schema.examples)) {
    for (const [i, value] of schema.examples.entries()) yield { where: `${where}/examples/${i}`, schema, value };
  }
  if ("default" in schema) yield { where: `${where}/default`, schema, value: schema.default };
  for (const key of ["properties", "patternProperties", "$defs", "dependentSchemas"]) {
    if (!isObject(schema[key])) continue;
    for (const [name, sub] of Object.entries(schema[key])) yield* schemaValues(sub, `${where}/${key}/${name}`);
  }
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    if (!Array.isArray(schema[key])) continue;
    for (const [i, sub] of (schema[key] as unknown[]).entries()) yield* schemaValues(sub, `${where}/${key}/${i}`);
  }
  for (const key of ["items", "not", "additionalProperties", "contains", "if", "then", "else", "propertyNames"]) {
    yield* schemaValues(schema[key], `${where}/${key}`);
  }
}

/** A media type, parameter or header: its schema's values, and its own example(s), against that schema. */
function* carrierValues(carrier: unknown, where: string): Generator<DocumentedValue> {
  if (!isObject(carrier)) return;
  const schema = carrier.schema;
  if (isObject(schema)) {
    yield* schemaValues(schema, `${where}/schema`);
    if ("example" in carrier) yield { where: `${where}/example`, schema, value: carrier.example };
    if (isObject(carrier.examples)) {
      for (const [name, example] of Object.entries(carrier.examples)) {
        if (isObject(example) && "value" in example) {
          yield { where: `${where}/examples/${name}`, schema, value: example.value };
        }
      }
    }
  }
  if (isObject(carrier.content)) {
    for (const [type, media] of Object.entries(carrier.content))
      yield* carrierValues(media, `${where}/content/${type}`);
  }
}

function* responseValues(response: unknown, where: string): Generator<DocumentedValue> {
  if (!isObject(response)) return;
  yield* carrierValues(response, where);
  if (isObject(response.headers)) {
    for (const [name, header] of Object.entries(response.headers))
      yield* carrierValues(header, `${where}/headers/${name}`);
  }
}

/** Every value the document shows beside a schema: in components, parameters, bodies, responses and headers. */
export function documentedValues(doc: object): DocumentedValue[] {
  const values: DocumentedValue[] = [];
  const { components = {}, paths = {} } = doc as { components?: Json; paths?: Record<string, Json> };
  for (const [name, schema] of Object.entries((components.schemas ?? {}) as Json)) {
    values.push(...schemaValues(schema, `#/components/schemas/${name}`));
  }
  for (const kind of ["parameters", "headers", "requestBodies"]) {
    for (const [name, carrier] of Object.entries((components[kind] ?? {}) as Json)) {
      values.push(...carrierValues(carrier, `#/components/${kind}/${name}`));
    }
  }
  for (const [name, response] of Object.entries((components.responses ?? {}) as Json)) {
    values.push(...responseValues(response, `#/components/responses/${name}`));
  }
  for (const { method, path } of operationsOf(doc)) {
    const op = paths[path][method] as Json;
    const where = `#/paths/${path.replace(/~/g, "~0").replace(/\//g, "~1")}/${method}`;
    for (const [i, parameter] of ((op.parameters ?? []) as unknown[]).entries()) {
      values.push(...carrierValues(parameter, `${where}/parameters/${i}`));
    }
    values.push(...carrierValues(op.requestBody, `${where}/requestBody`));
    for (const [status, response] of Object.entries((op.responses ?? {}) as Json)) {
      values.push(...responseValues(response, `${where}/responses/${status}`));
    }
  }
  return values;
}

/**
 * Validates values against schemas of `doc` (JSON Schema 2020-12, formats checked), its
 * `#/components/...` references resolved in the document. OpenAPI's own keywords are known and ignored.
 */
export function schemaValidator(doc: object): (schema: object, value: unknown) => string[] {
  // strictRequired off: `required` in an anyOf or a not names the properties of the schema around it.
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
  addFormats(ajv);
  ajv.addVocabulary(["example", "discriminator", "xml", "externalDocs", "components"]);
  const { components } = doc as { components?: object };
  const compiled = new Map<object, ValidateFunction>();
  return (schema, value) => {
    let validate = compiled.get(schema);
    if (!validate) {
      // The document's components ride along, so that "#/components/schemas/X" resolves.
      validate = ajv.compile({ ...schema, components });
      compiled.set(schema, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath || "(value)"} ${e.message}`);
  };
}
