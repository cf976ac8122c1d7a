import type { Readable } from "node:stream";
import { parse } from "csv-parse";
import { addressFault } from "../chain/address-checksum";
import { ApiError, type ErrorDetail } from "../http/errors";

export type JobKind = "airdrop" | "whitelist";

/** At most this many rows in one job (API.md). */
export const MAX_ROWS = 100_000;
/** At most this many bytes in one job's body: the one route allowed past 100 kB. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Bad rows named in a 400 at most; the message says how many more there were. */
const MAX_DETAILS = 1_000;

/** One row as sent: where it was (`line`: its row in the file, or its index + 1 in JSON), its address and amount. */
export interface InputRow {
  line: number;
  address: unknown;
  amount?: unknown;
}

/** One entry of a job after checking and merging: a lowercase address, its amount (airdrop), its first input row. */
export interface JobEntry {
  line: number;
  address: string;
  amount: bigint;
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

function amountOf(value: unknown): bigint | string {
  const text = typeof value === "number" && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text !== "string" || !DECIMAL.test(text.trim())) return "amount must be a whole number ≥ 1";
  const amount = BigInt(text.trim());
  if (amount < 1n) return "amount must be ≥ 1";
  if (amount >= 2n ** 256n) return "amount must fit in 256 bits";
  return amount;
}

/**
 * Checks every row and merges duplicates (amounts added for an airdrop, one entry for a
 * whitelist), in the order each address first appears. Throws 400 VALIDATION_ERROR naming each
 * bad row (`row N`), before anything is planned; `extra` are problems the reader found itself
 * (a broken CSV line).
 */
export function checkRows(kind: JobKind, rows: InputRow[], extra: ErrorDetail[] = []): JobEntry[] {
  const problems: ErrorDetail[] = [...extra];
  const byAddress = new Map<string, JobEntry>();
  for (const row of rows) {
    const addressError = addressProblem(typeof row.address === "string" ? row.address.trim() : row.address);
    const amount = kind === "airdrop" ? amountOf(row.amount) : 1n;
    const message = addressError ?? (typeof amount === "string" ? amount : undefined);
    if (message) {
      problems.push({ path: `row ${row.line}`, message });
      continue;
    }
    const address = (row.address as string).trim().toLowerCase();
    const seen = byAddress.get(address);
    if (seen) seen.amount += amount as bigint;
    else byAddress.set(address, { line: row.line, address, amount: amount as bigint });
  }
  if (rows.length > MAX_ROWS)
    problems.unshift({ path: "(body)", message: `at most ${MAX_ROWS} rows; this list has ${rows.length}` });
  if (rows.length === 0 && problems.length === 0) problems.push({ path: "(body)", message: "the list has no rows" });
  if (problems.length > 0) {
    problems.sort((a, b) => lineOf(a) - lineOf(b));
    const shown = problems.slice(0, MAX_DETAILS);
    const more = problems.length - shown.length;
    throw new ApiError(
      "VALIDATION_ERROR",
      `${problems.length} bad row${problems.length === 1 ? "" : "s"}: ${shown
        .slice(0, 5)
        .map((p) => `${p.path}: ${p.message}`)
        .join("; ")}${problems.length > 5 ? "; …" : ""}${more > 0 ? ` (${more} more not listed)` : ""}`,
      shown,
    );
  }
  return [...byAddress.values()];
}

function lineOf(detail: ErrorDetail): number {
  const match = /^row (\d+)$/.exec(detail.path);
  return match ? Number(match[1]) : 0;
}

/** The text after the first `lines` lines of `text`. */
function after(text: string, lines: number): string {
  let at = 0;
  for (let i = 0; i < lines; i++) {
    const newline = text.indexOf("\n", at);
    if (newline === -1) return "";
    at = newline + 1;
  }
  return text.slice(at);
}

/**
 * Reads a CSV body as it streams in (csv-parse): rows `address,amount` (airdrop) or `address`
 * (whitelist), an optional header row, `line` being each record's row in the file. A line the
 * parser cannot read (a broken quote) is a problem of that row, and reading goes on from the next
 * line (the body read so far is kept for that: at most MAX_BODY_BYTES). Refuses more than
 * MAX_BODY_BYTES (400) as soon as it passes them.
 */
export async function readCsvRows(body: Readable): Promise<{ rows: InputRow[]; problems: ErrorDetail[] }> {
  const rows: InputRow[] = [];
  const problems: ErrorDetail[] = [];
  const chunks: Buffer[] = [];
  let bytes = 0;
  let offset = 0;
  let lastLine = 0;
  let first = true;
  const tooLarge = () =>
    new ApiError("VALIDATION_ERROR", `Request body is over ${MAX_BODY_BYTES / 1024 / 1024} MB`, [
      { path: "(body)", message: "too large" },
    ]);
  // Records are taken as the parser makes them (on_record), so that those before a broken line are kept.
  const newParser = () =>
    parse({
      relax_column_count: true,
      skip_empty_lines: true,
      trim: true,
      bom: true,
      on_record: (record: string[], context) => {
        const line = offset + context.lines;
        lastLine = line;
        const [address, amount] = record;
        if (first) {
          first = false;
          // A header row names its columns: anything in the first column that does not look like hex.
          if (address !== undefined && !/^0x/i.test(address)) return null;
        }
        if (rows.length <= MAX_ROWS) rows.push({ line, address: address ?? "", amount });
        return null;
      },
    });
  const run = (parser: ReturnType<typeof parse>) =>
    new Promise<void>((resolve, reject) => {
      parser.once("end", resolve);
      parser.once("error", reject);
      parser.resume();
    });
  let parser = newParser();
  body.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
    chunks.push(chunk);
    if (bytes > MAX_BODY_BYTES && !parser.destroyed) {
      // The rest is read and dropped (the answer still goes out on this connection).
      body.unpipe(parser);
      body.resume();
      parser.destroy(tooLarge());
    }
  });
  body.on("error", (err) => parser.destroy(err));
  let fromBody = true;
  for (;;) {
    try {
      if (fromBody) body.pipe(parser);
      await run(parser);
      break;
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if (bytes > MAX_BODY_BYTES) throw tooLarge();
      // The record that broke starts on the line after the last good one (an unclosed quote is
      // only noticed at the end of the file); reading resumes after it.
      const bad =
        (err as { code?: string }).code === "CSV_QUOTE_NOT_CLOSED"
          ? lastLine + 1
          : offset + ((err as { lines?: number }).lines ?? 1);
      problems.push({ path: `row ${bad}`, message: `not a valid CSV line: ${(err as Error).message.split(":")[0]}` });
      if (fromBody) {
        body.unpipe(parser);
        const ended = new Promise<void>((resolve) => (body.readableEnded ? resolve() : body.once("end", resolve)));
        body.resume();
        await ended;
        if (bytes > MAX_BODY_BYTES) throw tooLarge();
        fromBody = false;
      }
      const rest = after(Buffer.concat(chunks).toString("utf8"), bad);
      if (rest.trim() === "" || problems.length > MAX_ROWS) break;
      offset = bad;
      lastLine = bad;
      first = false;
      parser = newParser();
      parser.end(rest);
    }
  }
  if (bytes > MAX_BODY_BYTES) throw tooLarge();
  return { rows, problems };
}
