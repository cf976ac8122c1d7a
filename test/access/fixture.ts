/**
 * What the access-key tests share: a client that keeps every response (body and headers) for the
 * secret scan and remembers each access-key secret it was shown, and the scans themselves.
 */
import { expect } from "chai";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { accessKeyHash } from "../../server/access/secrets";
import { ApiClient, TEST_API_KEY, type ApiResponse, type JsonBody } from "../api/harness";

/** Every scope API.md names, in its order. */
export const ALL_SCOPES = [
  "nft:read",
  "nft:mint",
  "nft:mintForFree",
  "nft:configure",
  "nft:withdraw",
  "nft:deploy",
  "nft:vouchers",
  "wallets:read",
  "wallets:manage",
  "webhooks:manage",
  "access-keys:manage",
  "metrics:read",
] as const;

export type ScopeName = (typeof ALL_SCOPES)[number];

/** The request headers that present `key`, in each form API.md accepts. */
export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
export const xApiKey = (key: string) => ({ "X-API-Key": key });
export const apiKeyHeader = (key: string) => ({ API_KEY: key });
export const ROOT = bearer(TEST_API_KEY);

export interface MadeKey {
  id: string;
  key: string;
  body: JsonBody;
}

/** One response as the scan sees it: status line, every header, the body. */
interface Seen {
  text: string;
  /** The secret this response may show: the one POST /access-keys made here. */
  shows?: string;
}

/** ApiClient that also keeps the headers of every response and the secrets POST /access-keys showed. */
export class AccessClient extends ApiClient {
  readonly seen: Seen[] = [];
  /** Every access-key secret made through this client. */
  readonly secrets: string[] = [];

  override async request(
    method: string,
    pathname: string,
    init: { json?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const res = await super.request(method, pathname, init);
    const headers = [...res.headers.entries()].map(([name, value]) => `${name}: ${value}`).join("\n");
    const made = method === "POST" && pathname === "/access-keys" && res.status === 201;
    if (made) this.secrets.push(res.body.key as string);
    this.seen.push({ text: `${res.status}\n${headers}\n\n${res.text}`, shows: made ? res.body.key : undefined });
    return res;
  }

  /** POST /access-keys as `as` (the root key by default); asserts the 201. */
  async makeKey(grant: JsonBody, as: Record<string, string> = ROOT): Promise<MadeKey> {
    const res = await this.post("/access-keys", { name: "test", ...grant }, as);
    expect(res.status, res.text).to.equal(201);
    return { id: res.body.id, key: res.body.key, body: res.body };
  }

  delete(pathname: string, headers?: Record<string, string>): Promise<ApiResponse> {
    return this.request("DELETE", pathname, { headers });
  }

  getAs(pathname: string, headers: Record<string, string>): Promise<ApiResponse> {
    return this.request("GET", pathname, { headers });
  }
}

/** 403 FORBIDDEN whose message and details name `what` (e.g. "the scope nft:mint"). */
export function expectForbidden(res: ApiResponse, what: string): void {
  expect(res.status, res.text).to.equal(403);
  expect(res.body.error.code, res.text).to.equal("FORBIDDEN");
  expect(res.body.error.message).to.include(what);
}

/** 401 with `code` and a WWW-Authenticate: Bearer challenge. */
export function expectUnauthorized(res: ApiResponse, code = "UNAUTHORIZED"): void {
  expect(res.status, res.text).to.equal(401);
  expect(res.body.error.code, res.text).to.equal(code);
  expect(res.headers.get("www-authenticate") ?? "").to.match(/^Bearer\b/);
}

/** The secrets a scan looks for: every access-key secret shown to `clients`, and the root API_KEY. */
export function secretsOf(...clients: AccessClient[]): string[] {
  return [TEST_API_KEY, ...clients.flatMap((c) => c.secrets)];
}

/**
 * No response (status, headers, body) carries an access-key secret, except the 201 that showed
 * its own, nor the root API_KEY; no line the services printed carries any.
 */
export function expectNoAccessSecrets(clients: AccessClient[], outputs: string[]): void {
  const secrets = secretsOf(...clients);
  expect(secrets.length, "access keys were made").to.be.greaterThan(1);
  const leaks: string[] = [];
  for (const client of clients) {
    expect(client.seen.length, "responses were captured").to.be.greaterThan(0);
    for (const { text, shows } of client.seen) {
      for (const secret of secrets) {
        if (secret !== shows && text.includes(secret)) leaks.push(`${secret.slice(0, 9)}… in ${text.slice(0, 200)}`);
      }
    }
  }
  for (const output of outputs) {
    expect(output, "service output was captured").to.include('"msg":"request"');
    for (const line of output.split("\n")) {
      for (const secret of secrets) if (line.includes(secret)) leaks.push(`${secret.slice(0, 9)}… in log: ${line}`);
    }
  }
  expect(leaks, "secrets where they must not be").to.deep.equal([]);
}

/** What `haystack` holds of each secret: the secret itself (must be never) and its SHA-256 hex (the stored form). */
export function storedForms(haystack: Buffer, secrets: string[]): { secrets: string[]; hashes: number } {
  const found = secrets.filter((s) => haystack.includes(Buffer.from(s)));
  const hashes = secrets.filter((s) => s.startsWith("nfto_") && haystack.includes(Buffer.from(accessKeyHash(s))));
  return { secrets: found.map((s) => `${s.slice(0, 9)}…`), hashes: hashes.length };
}

/** Every regular file under `dir`, read whole and joined (a PGlite data dir is some tens of MB). */
export async function readTree(dir: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) chunks.push(await readFile(path.join(entry.parentPath, entry.name)));
  }
  return Buffer.concat(chunks);
}
