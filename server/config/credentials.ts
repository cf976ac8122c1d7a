/**
 * Credentials inside connection URLs (RPC_URL, DATABASE_URL): hosted RPC endpoints carry their API
 * key in the path or the query, database URLs carry a password. They are masked wherever the
 * service prints a URL, and scrubbed from every log line.
 */

const MASK = "***";
/** A path segment this long is taken for a key (Infura /v3/<32 hex>, Alchemy /v2/<32 chars>, …). */
const TOKEN_MIN_LENGTH = 16;
const TOKEN_SEGMENT = new RegExp(`^[A-Za-z0-9_~.=-]{${TOKEN_MIN_LENGTH},}$`);
/**
 * Shorter pieces are too common to scrub from any text (a password "abc" would mask every word that
 * holds it); the generic patterns below still catch them inside URLs.
 */
const PASSWORD_MIN_LENGTH = 6;
const QUERY_VALUE_MIN_LENGTH = 12;

/** `scheme://user:secret@` anywhere in a text. */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:@/"'\\]*):[^\s@/"'\\]+@/gi;
/** `?apikey=…`, `&token=…` and the like anywhere in a text. */
const SECRET_QUERY =
  /([?&](?:api[_-]?key|key|token|access[_-]?token|auth|secret|password|passwd|pwd|sig|signature)=)[^&\s"'\\#]+/gi;

/** A label of a host name this long, all letters and digits, is taken for a key (`<key>.rpc.example`). */
const KEY_LABEL = new RegExp(`^[A-Za-z0-9]{${TOKEN_MIN_LENGTH},}$`);

/**
 * `url` as the service shows it: its scheme, host and port, then `/***`. User names, passwords,
 * paths, queries and fragments are never shown, and a host label that looks like a key is `***`:
 * `https://eth.example/***`, `https://***.rpc.example:8443/***`, `postgres://db.internal:5432/***`.
 */
export function maskUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "[unparsable URL]";
  }
  const host = parsed.hostname
    .split(".")
    .map((label) => (KEY_LABEL.test(label) ? MASK : label))
    .join(".");
  return `${parsed.protocol}//${host}${parsed.port ? `:${parsed.port}` : ""}/${MASK}`;
}

/**
 * The secret pieces of `url`, raw and decoded: its user name and password, and the host labels,
 * query values and path segments long enough to be keys (a short query value such as `sslmode=require` is not scrubbed
 * from every text; it stays masked in `maskUrl`).
 */
export function credentialFragments(url: string | undefined): string[] {
  if (!url) return [];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.length >= PASSWORD_MIN_LENGTH ? [url] : [];
  }
  const pieces: [string, number][] = [
    [parsed.password, PASSWORD_MIN_LENGTH],
    // An Infura-style `<project id>:<secret>@`: the user name is half the credential.
    [parsed.username, PASSWORD_MIN_LENGTH],
    ...parsed.hostname
      .split(".")
      .filter((label) => KEY_LABEL.test(label))
      .map((label): [string, number] => [label, TOKEN_MIN_LENGTH]),
    ...parsed.pathname
      .split("/")
      .filter((segment) => TOKEN_SEGMENT.test(segment))
      .map((segment): [string, number] => [segment, TOKEN_MIN_LENGTH]),
    ...parsed.search
      .slice(1)
      .split("&")
      .map((pair): [string, number] => [pair.slice(pair.indexOf("=") + 1), QUERY_VALUE_MIN_LENGTH]),
  ];
  const fragments = new Set<string>();
  for (const [piece, minLength] of pieces) {
    for (const form of [piece, safeDecode(piece)]) {
      if (form.length >= minLength) fragments.add(form);
    }
  }
  return [...fragments];
}

/**
 * A function that removes credentials from a text: the `fragments` given (from the configured
 * URLs, also in their JSON-escaped form), and any URL userinfo or secret-looking query value.
 */
export function credentialScrubber(fragments: readonly string[]): (text: string) => string {
  const needles = [...new Set(fragments.flatMap((f) => [f, JSON.stringify(f).slice(1, -1)]))].sort(
    (a, b) => b.length - a.length, // longest first, so that a fragment inside another is not left half-masked
  );
  return (text) => {
    let out = text.replace(USERINFO, `$1:${MASK}@`).replace(SECRET_QUERY, `$1${MASK}`);
    for (const needle of needles) if (out.includes(needle)) out = out.split(needle).join(MASK);
    return out;
  };
}

function safeDecode(piece: string): string {
  try {
    return decodeURIComponent(piece.replace(/\+/g, " "));
  } catch {
    return piece;
  }
}
