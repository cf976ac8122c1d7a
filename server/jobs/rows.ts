import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { addressFault } from "../chain/address-checksum";
import type { Standard } from "../chain/chain-client";
import { ApiError, type ErrorDetail } from "../http/errors";

export type JobKind = "airdrop" | "whitelist";

/** At most this many rows in one job (API.md). */
export const MAX_ROWS = 100_000;
/** At most this many bytes in one job's body: the one route allowed past 100 kB. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Bad rows named in a 400 at most; the message says how many more there were. */
export const MAX_DETAILS = 1_000;

/**
 * One row as sent: where it was (`line`: its row in the file, or its index + 1 in JSON), its
 * address and amount, and the edition it airdrops (`tokenId`, on an ERC-1155 only).
 */
export interface InputRow {
  line: number;
  address: unknown;
  amount?: unknown;
  tokenId?: unknown;
}

/**
 * One entry of a job after checking and merging: a lowercase address, its amount (airdrop), its
 * first input row, and on an edition contract the edition it gets (`tokenId`).
 */
export interface JobEntry {
  line: number;
  address: string;
  amount: bigint;
  tokenId?: bigint;
}

const DECIMAL = /^[0-9]{1,78}$/;

const ADDRESS_FAULTS = {
  format: "address must be 20 bytes of hex (0x…)",
  checksum: "address has a wrong checksum (EIP-55)",
} as const;

/** Why `value` is no address, or undefined when it is one (checksummed when mixed-case). */
function addressProblem(value: unknown): string | undefined {
  const fault = addressFault(value);
  return fault && ADDRESS_FAULTS[fault];
}

/** A row's token id, or why it is none (a decimal that fits 256 bits; 0 is an id like any other in ERC-1155). */
function tokenIdOf(value: unknown): bigint | string {
  const text = typeof value === "number" && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text !== "string" || !DECIMAL.test(text.trim())) return "tokenId must be a whole number (decimal)";
  const id = BigInt(text.trim());
  if (id >= 2n ** 256n) return "tokenId must be at most 2^256 - 1 (78 digits)";
  return id;
}

/** Whether a row gives a token id at all (an empty CSV field gives none). */
const givesTokenId = (row: InputRow) => row.tokenId !== undefined && row.tokenId !== null && row.tokenId !== "";

function amountOf(value: unknown): bigint | string {
  const text = typeof value === "number" && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text !== "string" || !DECIMAL.test(text.trim())) return "amount must be a whole number ≥ 1";
  const amount = BigInt(text.trim());
  if (amount < 1n) return "amount must be ≥ 1";
  if (amount >= 2n ** 256n) return "amount must be at most 2^256 - 1 (78 digits)";
  return amount;
}

/** Bad rows as found, in row order: the first MAX_DETAILS named, the others only counted. */
export class RowProblems {
  readonly named: ErrorDetail[] = [];
  count = 0;

  add(line: number, message: string): void {
    this.count += 1;
    if (this.named.length < MAX_DETAILS) this.named.push({ path: `row ${line}`, message });
  }
}

/** 400 for a list over MAX_ROWS, before any row is looked at. */
export function tooManyRows(count: number): ApiError {
  return new ApiError("VALIDATION_ERROR", `At most ${MAX_ROWS} rows; this list has ${count}`, [
    { path: "(body)", message: `at most ${MAX_ROWS} rows; this list has ${count}` },
  ]);
}

/**
 * 400 for a tokenId column on an ERC-721 collection: its airdrop mints new token ids, it cannot be
 * told which. Names `tokenId` and the first rows that give one.
 */
function tokenIdOnErc721(rows: InputRow[], contractAddress: string): ApiError {
  const giving = rows.filter(givesTokenId);
  const named = giving.slice(0, 5).map((r) => `row ${r.line}`);
  const message =
    `${contractAddress} is an ERC-721 collection: its airdrop mints new token ids, so its rows take no tokenId ` +
    `(only an ERC-1155 edition contract does); ${named.join(", ")}${giving.length > named.length ? ", …" : ""} give one`;
  return new ApiError("VALIDATION_ERROR", message, [{ path: "tokenId", message }]);
}

/** What checkRows needs to know of the contract: its standard (an edition's airdrop rows need a tokenId) and address. */
export interface RowTarget {
  standard: Standard;
  contractAddress: string;
}

/**
 * Checks every row and merges duplicates (amounts added for an airdrop, one entry for a
 * whitelist), in the order each address first appears. On an edition contract (ERC-1155) every
 * airdrop row names its edition (`tokenId`), duplicates are merged per edition, and the entries come
 * grouped by edition (in the order each first appears), so that a batch, one `airdrop(id, …)` call,
 * holds one edition. Throws 400 VALIDATION_ERROR naming the first MAX_DETAILS bad rows (`row N`)
 * and counting the others, before anything is planned; `found` are problems the reader found
 * itself (a broken CSV line), in row order. An ERC-721 airdrop with a tokenId column: 400 naming
 * `tokenId`.
 */
export function checkRows(
  kind: JobKind,
  rows: InputRow[],
  found: RowProblems = new RowProblems(),
  target?: RowTarget,
): JobEntry[] {
  if (rows.length > MAX_ROWS) throw tooManyRows(rows.length);
  const editions = kind === "airdrop" && target?.standard === "erc1155";
  if (kind === "airdrop" && target?.standard === "erc721" && rows.some(givesTokenId))
    throw tokenIdOnErc721(rows, target.contractAddress);
  const problems = new RowProblems();
  // Per edition (the key "" for a collection), in the order each first appears; then per address.
  const groups = new Map<string, Map<string, JobEntry>>();
  for (const row of rows) {
    const addressError = addressProblem(typeof row.address === "string" ? row.address.trim() : row.address);
    const amount = kind === "airdrop" ? amountOf(row.amount) : 1n;
    const tokenId = !editions
      ? undefined
      : givesTokenId(row)
        ? tokenIdOf(row.tokenId)
        : `tokenId is required: ${target!.contractAddress} is an ERC-1155 edition contract (columns address,amount,tokenId)`;
    const message =
      addressError ??
      (typeof amount === "string" ? amount : undefined) ??
      (typeof tokenId === "string" ? tokenId : undefined);
    if (message) {
      problems.add(row.line, message);
      continue;
    }
    const address = (row.address as string).trim().toLowerCase();
    const key = tokenId === undefined ? "" : tokenId.toString();
    let byAddress = groups.get(key);
    if (!byAddress) groups.set(key, (byAddress = new Map()));
    const seen = byAddress.get(address);
    if (seen) seen.amount += amount as bigint;
    else
      byAddress.set(address, {
        line: row.line,
        address,
        amount: amount as bigint,
        ...(tokenId !== undefined ? { tokenId: tokenId as bigint } : {}),
      });
  }
  const total = problems.count + found.count;
  if (total === 0 && rows.length === 0)
    throw new ApiError("VALIDATION_ERROR", "The list has no rows", [
      { path: "(body)", message: "the list has no rows" },
    ]);
  if (total > 0) {
    // Both lists are in row order, each cut at MAX_DETAILS: their first MAX_DETAILS together are the file's.
    const shown = [...found.named, ...problems.named].sort((a, b) => lineOf(a) - lineOf(b)).slice(0, MAX_DETAILS);
    const more = total - shown.length;
    throw new ApiError(
      "VALIDATION_ERROR",
      `${total} bad row${total === 1 ? "" : "s"}: ${shown
        .slice(0, 5)
        .map((p) => `${p.path}: ${p.message}`)
        .join(
          "; ",
        )}${total > 5 ? "; …" : ""}${more > 0 ? ` (the first ${shown.length} listed, ${more} more not listed)` : ""}`,
      shown,
    );
  }
  return [...groups.values()].flatMap((byAddress) => [...byAddress.values()]);
}

function lineOf(detail: ErrorDetail): number {
  const match = /^row (\d+)$/.exec(detail.path);
  return match ? Number(match[1]) : 0;
}

/**
 * 400 for a body past `limit` bytes; the rest is never read. A body being read (`reading`) has its
 * connection closed CLOSE_AFTER_REFUSAL_MS later (see closeUnread); one refused on its declared length,
 * with the answer (Node would otherwise read it to its end to keep the connection).
 */
export function bodyTooLarge(limit = MAX_BODY_BYTES, reading?: Readable): ApiError {
  if (reading) closeUnread(reading);
  return new ApiError(
    "VALIDATION_ERROR",
    `Request body is over ${limit / 1024 / 1024} MB`,
    [{ path: "(body)", message: "too large" }],
    reading ? undefined : { Connection: "close" },
  );
}

/** How long a refused body's connection stays open, unread, after the refusal. */
const CLOSE_AFTER_REFUSAL_MS = 2_000;

/**
 * Closes the connection of a body left unread, a moment after the answer rather than with it.
 * A socket closed with unread bytes sends a reset, and a client that had not yet read the 400 when
 * the reset came loses it (seen with a busy client: `Connection: close` made Node close the socket as
 * soon as the answer was written). Meanwhile nothing is read: the client's writes stop at the
 * connection's buffers.
 */
function closeUnread(body: Readable): void {
  const socket = (body as Readable & { socket?: { destroy(): void } }).socket;
  if (socket) setTimeout(() => socket.destroy(), CLOSE_AFTER_REFUSAL_MS).unref();
}

/**
 * The length of the longest array among the top-level fields of a JSON object, counted in one scan
 * of its text without parsing it (JSON.parse of 10 MB of bare numbers builds 5 million values first).
 * Exact for valid JSON; for broken JSON any number (JSON.parse then refuses it).
 */
export function longestTopLevelArray(text: string): number {
  let depth = 0;
  let inString = false;
  let longest = 0;
  let items = 0;
  let empty = true;
  let inArray = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes what follows
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      if (depth === 2 && inArray) empty = false;
    } else if (c === 0x7b || c === 0x5b) {
      if (depth === 1 && c === 0x5b) {
        inArray = true;
        items = 0;
        empty = true;
      } else if (depth === 2 && inArray) empty = false;
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 1 && inArray) {
        inArray = false;
        longest = Math.max(longest, empty ? 0 : items + 1);
      }
    } else if (depth === 2 && inArray) {
      if (c === 0x2c) items++;
      else if (c > 0x20) empty = false;
    }
  }
  return longest;
}

/** Reads a whole body of at most `limit` bytes: past them, 400 at once, and the rest is left unread. */
export function readBoundedBody(body: Readable, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  return readChunks(body, limit, (chunk) => chunks.push(chunk)).then(() => Buffer.concat(chunks));
}

/** Hands each chunk of `body` to `onChunk` until its end; past `limit` bytes, 400 and no more reading. */
function readChunks(body: Readable, limit: number, onChunk: (chunk: Buffer) => void): Promise<void> {
  let bytes = 0;
  return new Promise<void>((resolve, reject) => {
    const stop = (err?: unknown) => {
      body.off("data", onData).off("end", onEnd).off("error", stop);
      // Paused, not destroyed: the answer still goes out on this connection, which it then closes.
      body.pause();
      if (err) reject(err);
      else resolve();
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) return stop(bodyTooLarge(limit, body));
      onChunk(chunk);
    };
    const onEnd = () => stop();
    body.on("data", onData).once("end", onEnd).once("error", stop);
  });
}

/** The names a header row may hold: a first row made of these alone is the header. */
const COLUMN_NAMES = new Set(["address", "amount", "tokenid"]);

/** Where each field is in a row: `address,amount,tokenId` unless a header row says otherwise. */
interface Columns {
  address: number;
  amount: number;
  tokenId: number;
}
const DEFAULT_COLUMNS: Columns = { address: 0, amount: 1, tokenId: 2 };

/** The columns a header names (the others at their default place when the header leaves them out). */
function columnsOf(header: string[]): Columns {
  const at = (name: string, fallback: number) => {
    const i = header.findIndex((f) => f.toLowerCase() === name);
    return i === -1 ? fallback : i;
  };
  return { address: at("address", 0), amount: at("amount", 1), tokenId: at("tokenid", 2) };
}

/**
 * The fields of one CSV line (RFC 4180 within the line: a field may be quoted, `""` being a quote
 * inside it; spaces around a field are dropped), or why it is no CSV line. A quoted field ends on
 * its own line: a row is a line, so one broken line never takes the next ones with it.
 */
export function csvFields(line: string): string[] | string {
  if (!line.includes('"')) return line.split(",").map((f) => f.trim());
  const fields: string[] = [];
  let at = 0;
  for (;;) {
    while (line[at] === " " || line[at] === "\t") at++;
    let field: string;
    if (line[at] === '"') {
      let value = "";
      let from = at + 1;
      for (;;) {
        const quote = line.indexOf('"', from);
        if (quote === -1) return `a quote opened in field ${fields.length + 1} is not closed on its line`;
        value += line.slice(from, quote);
        if (line[quote + 1] === '"') {
          value += '"';
          from = quote + 2;
          continue;
        }
        at = quote + 1;
        break;
      }
      while (line[at] === " " || line[at] === "\t") at++;
      if (at < line.length && line[at] !== ",") return `text after the closing quote of field ${fields.length + 1}`;
      field = value;
    } else {
      const comma = line.indexOf(",", at);
      field = (comma === -1 ? line.slice(at) : line.slice(at, comma)).trim();
      if (field.includes('"')) return `a quote inside the unquoted field ${fields.length + 1}`;
      at = comma === -1 ? line.length : comma;
    }
    fields.push(field);
    if (at >= line.length) return fields;
    at++; // the comma
  }
}

/**
 * Reads a CSV body as it streams in, in one pass: one row per line, `address,amount` (airdrop),
 * `address,amount,tokenId` (an edition's airdrop) or `address` (whitelist), `line` being the row's
 * line in the file. The first row is a header when its fields are column names (`address`,
 * `amount`, `tokenId`, any case), and then gives the columns' order; any other first row is data,
 * checked as such.
 * A line that is no CSV (a broken quote) is a problem of that row, and reading goes on at the next
 * line. At most `limit` bytes are read: past them, 400 at once, and the rest is left unread.
 */
export async function readCsvRows(
  body: Readable,
  limit = MAX_BODY_BYTES,
): Promise<{ rows: InputRow[]; problems: RowProblems }> {
  const rows: InputRow[] = [];
  const problems = new RowProblems();
  const decoder = new StringDecoder("utf8");
  let line = 0;
  let partial = "";
  let first = true;
  let count = 0;
  let columns = DEFAULT_COLUMNS;
  const take = (text: string) => {
    if (line === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a byte order mark
    line += 1;
    const trimmed = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (trimmed.trim() === "") return;
    const fields = csvFields(trimmed);
    if (typeof fields === "string") {
      problems.add(line, `not a valid CSV line: ${fields}`);
      first = false;
      return;
    }
    if (first) {
      first = false;
      const named = fields.filter((f) => f !== "");
      if (named.length > 0 && named.every((f) => COLUMN_NAMES.has(f.toLowerCase()))) {
        columns = columnsOf(fields);
        return;
      }
    }
    // Past MAX_ROWS the list is refused whatever its rows say: they are counted, not kept.
    count += 1;
    if (count <= MAX_ROWS)
      rows.push({
        line,
        address: fields[columns.address],
        amount: fields[columns.amount],
        tokenId: fields[columns.tokenId],
      });
  };
  const feed = (text: string) => {
    let start = 0;
    for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
      take(partial + text.slice(start, end));
      partial = "";
      start = end + 1;
    }
    partial += text.slice(start);
  };
  await readChunks(body, limit, (chunk) => feed(decoder.write(chunk)));
  feed(decoder.end());
  if (partial !== "") take(partial);
  if (count > MAX_ROWS) throw tooManyRows(count);
  return { rows, problems };
}
