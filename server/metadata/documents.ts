/**
 * Token metadata documents (API.md, "Metadata"): the ERC-721 metadata JSON fields marketplaces
 * read, checked, then kept and served in their RFC 8785 canonical bytes, so that anyone can hash
 * what is served and compare with the provenance on chain.
 */
import canonicalizeJson from "canonicalize";
import { z } from "zod";
import { chainField, decimalRange } from "../http/fields";
import { checkInWords, invalid } from "../http/validation";

/** The most tokens one PUT takes, and its largest body. */
export const MAX_TOKENS_PER_REQUEST = 10_000;
export const METADATA_BODY_LIMIT = "10mb";
/** The largest canonical document of one token. */
export const MAX_DOCUMENT_BYTES = 16 * 1024;
/** The largest `data:` URI a document may hold. */
export const MAX_DATA_URI_BYTES = 32 * 1024;
/** Token ids are stored as bigint; the reference contract's ids start at 1. */
const MAX_TOKEN_ID = BigInt(Number.MAX_SAFE_INTEGER);

/** What a wallet may be sent to: content-addressed or TLS URIs, or a small inline `data:` URI; never `javascript:`. */
const uri = (name: string) =>
  z
    .string()
    // The form, where a client reads it; a data: URI's size (under 32 kB) is the refine's and the description's.
    .regex(
      /^(?:(?:ipfs|ar):\/\/\S+|https:\/\/\S+|data:\S*)$/,
      `${name} must be an ipfs://, ar:// or https:// URI, or a data: URI under 32 kB`,
    )
    .openapi({ description: `${name}: an ipfs://, ar:// or https:// URI, or a data: URI under 32 kB` })
    .refine(
      (v) =>
        /^(ipfs|ar):\/\/[^\s]+$/.test(v) ||
        /^https:\/\/[^\s]+$/.test(v) ||
        (/^data:[^\s]*$/.test(v) && Buffer.byteLength(v) < MAX_DATA_URI_BYTES),
      `${name} must be an ipfs://, ar:// or https:// URI, or a data: URI under 32 kB`,
    );

const Attribute = z.looseObject({
  trait_type: z.string().optional(),
  value: z.union([z.string(), z.number()], "value must be a string or a number"),
  display_type: z.enum(["number", "boost_number", "boost_percentage", "date"]).optional(),
});

/** One document: the fields marketplaces read, checked; any other field kept as given. */
export const MetadataDocument = z
  .looseObject({
    name: z.string().optional(),
    description: z.string().optional(),
    image: uri("image").optional(),
    animation_url: uri("animation_url").optional(),
    external_url: uri("external_url").optional(),
    background_color: z
      .string()
      .regex(/^[0-9a-fA-F]{6}$/, "background_color must be six hex digits, no #")
      .optional(),
    attributes: z.array(Attribute).optional(),
  })
  .openapi("MetadataDocument");

export const MetadataToken = MetadataDocument.extend({
  // What checkUpload's tokenIdOf takes: 1 to 2^53 - 1, a JSON integer or up to 20 decimal digits.
  tokenId: z
    .union([
      z.string().max(20).regex(decimalRange(1n, MAX_TOKEN_ID)),
      z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    ])
    .openapi({ description: "The token (1, 2, …); not part of its document" }),
}).openapi("MetadataToken");

export const PutMetadataBody = z
  .object({
    placeholder: MetadataDocument.optional(),
    tokens: z.array(MetadataToken).max(MAX_TOKENS_PER_REQUEST).optional(),
    chain: chainField,
  })
  // checkUpload's "send placeholder, tokens, or both", where a client reads it.
  .openapi("PutMetadataRequest", { anyOf: [{ required: ["placeholder"] }, { required: ["tokens"] }] });

/** A document ready to store: its canonical bytes. */
export interface CanonicalToken {
  tokenId: bigint;
  document: string;
}

export interface MetadataUpload {
  placeholder?: string;
  tokens: CanonicalToken[];
}

/** RFC 8785 canonical JSON of `value` (the `canonicalize` package). */
export function canonical(value: unknown): string {
  const text = canonicalizeJson(value);
  if (text === undefined) throw new Error("not JSON");
  return text;
}

/**
 * Checks a PUT body: every bad token is named (`tokens.41.image`) in one 400, and the answer is
 * all or nothing, so a 400 stores nothing.
 */
export function checkUpload(body: unknown): MetadataUpload {
  const details: Array<{ path: string; message: string }> = [];
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw invalid([{ path: "(body)", message: "must be an object with placeholder and/or tokens" }]);
  const { placeholder, tokens, chain, ...rest } = body as Record<string, unknown>;
  // The chain was routed on already (when several are configured); its form is checked here too.
  if (chain !== undefined && !chainField.safeParse(chain).success)
    details.push({ path: "chain", message: "chain must be a chain id or name (1 to 100 characters)" });
  for (const field of Object.keys(rest))
    details.push({ path: field, message: "unknown field (this route takes placeholder, tokens, chain)" });
  let placeholderBytes: string | undefined;
  if (placeholder !== undefined) placeholderBytes = checkDocument(placeholder, "placeholder", details);
  const out: CanonicalToken[] = [];
  if (tokens !== undefined) {
    if (!Array.isArray(tokens)) details.push({ path: "tokens", message: "must be an array" });
    else if (tokens.length > MAX_TOKENS_PER_REQUEST)
      details.push({ path: "tokens", message: `at most ${MAX_TOKENS_PER_REQUEST} tokens a request` });
    else {
      const seen = new Set<bigint>();
      tokens.forEach((token: unknown, n) => {
        const at = `tokens.${n}`;
        if (typeof token !== "object" || token === null || Array.isArray(token)) {
          details.push({ path: at, message: "must be an object" });
          return;
        }
        const { tokenId, ...document } = token as Record<string, unknown>;
        const id = tokenIdOf(tokenId);
        if (id === undefined) details.push({ path: `${at}.tokenId`, message: "tokenId must be an integer ≥ 1" });
        else if (seen.has(id)) details.push({ path: `${at}.tokenId`, message: `token ${id} is named twice` });
        else seen.add(id);
        const bytes = checkDocument(document, at, details);
        if (id !== undefined && bytes !== undefined) out.push({ tokenId: id, document: bytes });
      });
    }
  }
  if (placeholder === undefined && tokens === undefined)
    details.push({ path: "(body)", message: "send placeholder, tokens, or both" });
  if (details.length > 0) throw invalid(details);
  return { placeholder: placeholderBytes, tokens: out };
}

function tokenIdOf(value: unknown): bigint | undefined {
  let id: bigint;
  if (typeof value === "number" && Number.isSafeInteger(value)) id = BigInt(value);
  else if (typeof value === "string" && /^[0-9]{1,20}$/.test(value)) id = BigInt(value);
  else return undefined;
  return id >= 1n && id <= MAX_TOKEN_ID ? id : undefined;
}

/** How deep a document may nest objects and arrays: marketplaces read a few levels. */
export const MAX_DOCUMENT_DEPTH = 32;

/** A UTF-16 surrogate without its pair: no Unicode character, which RFC 8785 (I-JSON) refuses. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * What RFC 8785 cannot write of `document`, in words with the path it is at, or undefined: a number
 * that is not finite (1e400 parses as Infinity), a string or a name with a lone surrogate, or more
 * than MAX_DOCUMENT_DEPTH levels. Walked with a stack, not recursion: a document nested 20,000 deep
 * is refused, not a stack overflow.
 */
function notCanonical(document: unknown): { path: string[]; message: string } | undefined {
  const stack: Array<{ value: unknown; path: string[] }> = [{ value: document, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === "number" && !Number.isFinite(value))
      return { path, message: "must be a finite number (RFC 8785 has no Infinity or NaN)" };
    if (typeof value === "string" && LONE_SURROGATE.test(value))
      return { path, message: "holds a lone UTF-16 surrogate (\\ud800…\\udfff), which is no character" };
    if (typeof value !== "object" || value === null) continue;
    if (path.length >= MAX_DOCUMENT_DEPTH)
      return { path, message: `nests deeper than ${MAX_DOCUMENT_DEPTH} levels of objects and arrays` };
    for (const [key, child] of Object.entries(value)) {
      if (LONE_SURROGATE.test(key))
        return { path, message: "has a field name with a lone UTF-16 surrogate, which is no character" };
      stack.push({ value: child, path: [...path, key] });
    }
  }
  return undefined;
}

/** The document's canonical bytes, or undefined after adding what is wrong with it to `details`. */
function checkDocument(
  document: unknown,
  at: string,
  details: Array<{ path: string; message: string }>,
): string | undefined {
  const refused = notCanonical(document);
  if (refused) {
    details.push({ path: [at, ...refused.path].join("."), message: refused.message });
    return undefined;
  }
  const result = checkInWords(MetadataDocument, document);
  if (!result.success) {
    for (const detail of result.details)
      details.push({ path: detail.path ? `${at}.${detail.path}` : at, message: detail.message });
    return undefined;
  }
  const bytes = canonical(document);
  const size = Buffer.byteLength(bytes);
  if (size > MAX_DOCUMENT_BYTES) {
    details.push({ path: at, message: `${size} bytes canonical; at most ${MAX_DOCUMENT_BYTES} (16 kB) a token` });
    return undefined;
  }
  return bytes;
}
