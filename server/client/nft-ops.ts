/**
 * `npx nft-ops job airdrop FILE.csv --collection 0x… --from treasury`: runs a job against a
 * running service (NFT_OPS_URL, with the access key NFT_OPS_KEY) through the typed client
 * generated from the service's OpenAPI document (api-types.ts), shows a progress bar while it
 * runs, prints the summary and writes the failed rows to a CSV. A client of the service, not part
 * of it: it reads its own settings from the environment it is given.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { SingleBar } from "cli-progress";
import createClient, { createQuerySerializer } from "openapi-fetch";
import type { paths } from "./api-types";

export const USAGE = `Usage: nft-ops [--chain CHAIN] job airdrop|whitelist FILE.csv --collection 0x… --from WALLET [--failed OUT.csv]
       nft-ops mcp    (the service's MCP tools over stdio, for desktop clients)

Runs the CSV (rows "address,amount" for an airdrop, "address" for a whitelist; a header row is
optional) as a job of the service at NFT_OPS_URL (default http://127.0.0.1:3000), with the access
key NFT_OPS_KEY, and follows it to its end. --chain names the chain (its id or name; GET /chains
lists them): required when the service serves several.

Exit status: 0 every row confirmed; 1 rows failed (written to --failed, default FILE.failed.csv),
or the job paused or was cancelled; 2 a usage error, or a list the service refused (nothing ran).`;

const MAX_FILE_BYTES = 10 * 1024 * 1024;
const FINISHED = new Set(["completed", "failed", "cancelled", "paused"]);

/** Where the CLI writes: the summary to `out`, the progress bar and errors to `err`. */
export interface CliStreams {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream & { isTTY?: boolean };
}

class UsageError extends Error {}

function parse(argv: string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        collection: { type: "string" },
        from: { type: "string" },
        failed: { type: "string" },
        chain: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) throw new UsageError("");
  const [command, kind, file, ...extra] = positionals;
  if (command !== "job") throw new UsageError(`unknown command ${command ?? "(none)"}`);
  if (kind !== "airdrop" && kind !== "whitelist") throw new UsageError(`unknown job kind ${kind ?? "(none)"}`);
  if (!file) throw new UsageError("FILE.csv is required");
  if (extra.length > 0) throw new UsageError(`unexpected ${extra.join(" ")}`);
  if (!values.collection) throw new UsageError("--collection is required");
  if (!values.from) throw new UsageError("--from is required");
  return {
    kind: kind as "airdrop" | "whitelist",
    file,
    collection: values.collection,
    from: values.from,
    chain: values.chain,
    failedFile: values.failed ?? `${file.replace(/\.csv$/i, "")}.failed.csv`,
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs the CLI; resolves with its exit status. */
export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv,
  streams: CliStreams = { out: process.stdout, err: process.stderr },
): Promise<number> {
  const say = (text: string) => streams.out.write(`${text}\n`);
  const complain = (text: string) => streams.err.write(`${text}\n`);
  if (argv[0] === "mcp") return (await import("../mcp/stdio")).serveMcpStdio(env, complain);
  let args;
  try {
    args = parse(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    if (err.message) complain(`nft-ops: ${err.message}`);
    complain(USAGE);
    return 2;
  }
  let size: number;
  try {
    size = statSync(args.file).size;
  } catch {
    complain(`nft-ops: cannot read ${args.file}`);
    return 2;
  }
  if (size > MAX_FILE_BYTES) {
    complain(`nft-ops: ${args.file} is over 10 MB: split it into several jobs`);
    return 2;
  }
  const key = env.NFT_OPS_KEY;
  if (!key) {
    complain("nft-ops: NFT_OPS_KEY (an access key) is required");
    return 2;
  }
  // --chain goes as ?chain= on every request: the CSV is the body of POST /jobs, so its settings are
  // query parameters, and a job read by id names its chain so that a key limited to it may read it.
  const query = createQuerySerializer();
  const chain = args.chain === undefined ? {} : { chain: args.chain };
  const client = createClient<paths>({
    baseUrl: env.NFT_OPS_URL || "http://127.0.0.1:3000",
    headers: { Authorization: `Bearer ${key}` },
    querySerializer: (params) => query({ ...params, ...chain }),
  });

  const created = await client.POST("/jobs", {
    params: { query: { kind: args.kind, contractAddress: args.collection, from: args.from } },
    // The CSV goes as it is: the service reads and checks every row.
    body: readFileSync(args.file, "utf8") as never,
    bodySerializer: (body: unknown) => body as string,
    headers: { "Content-Type": "text/csv" },
  });
  if (!created.data) {
    const error = (
      created.error as { error?: { code: string; message: string; details?: { path: string; message: string }[] } }
    )?.error;
    complain(
      `nft-ops: the service refused the job (${created.response.status} ${error?.code ?? ""}): ${error?.message ?? ""}`,
    );
    for (const detail of error?.details ?? []) complain(`  ${detail.path}: ${detail.message}`);
    return created.response.status >= 500 ? 1 : 2;
  }
  const jobId = created.data.jobId!;
  say(`job ${jobId}: ${count(created.data.rows, "row")} in ${count(created.data.batches, "batch", "batches")}`);

  const bar = new SingleBar({
    format: "{bar} {percentage}% | {value}/{total} rows | {status}",
    stream: streams.err as NodeJS.WriteStream,
    hideCursor: true,
  });
  bar.start(created.data.rows, 0, { status: "running" });
  let job;
  for (;;) {
    const answer = await client.GET("/jobs/{id}", { params: { path: { id: jobId } } });
    if (!answer.data) {
      bar.stop();
      complain(`nft-ops: GET /jobs/${jobId} answered ${answer.response.status}`);
      return 1;
    }
    job = answer.data;
    bar.update(job.rowsByState.confirmed + job.rowsByState.failed, { status: job.status });
    if (FINISHED.has(job.status)) break;
    await sleep(500);
  }
  bar.stop();

  const { confirmed, failed, pending, sent } = job.rowsByState;
  say(
    `${job.status}: ${confirmed} confirmed, ${failed} failed, ${pending + sent} not done; gas used ${job.gasUsed}, wei spent ${job.weiSpent}`,
  );
  if (job.error) say(`${job.error.code}: ${job.error.message}`);
  if (job.status === "paused") say(`resume it with POST /jobs/${jobId}/resume once fixed`);
  if (failed > 0) {
    const rows = await client.GET("/jobs/{id}/rows", {
      params: { path: { id: jobId }, query: { status: "failed" } },
      headers: { Accept: "text/csv" },
      parseAs: "text",
    });
    writeFileSync(args.failedFile, (rows.data as string | undefined) ?? "");
    say(`failed rows written to ${args.failedFile}`);
  }
  return job.status === "completed" && failed === 0 ? 0 : 1;
}

/** "1 batch", "2 batches". */
function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
