/**
 * `npx nft-ops job airdrop FILE.csv --collection 0x… --from treasury`: runs a job against a
 * running service (NFT_OPS_URL, with the access key NFT_OPS_KEY) through the typed client
 * generated from the service's OpenAPI document (api-types.ts), shows a progress bar while it
 * runs, prints the summary and writes the failed rows to a CSV. `npx nft-ops edition create`
 * creates an edition of an ERC-1155 edition contract (POST /nft/createEdition) and prints its
 * tokenId. A client of the service, not part of it: it reads its own settings from the
 * environment it is given.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { SingleBar } from "cli-progress";
import createClient, { createQuerySerializer } from "openapi-fetch";
import type { paths } from "./api-types";

export const USAGE = `Usage: nft-ops [--chain CHAIN] job airdrop|whitelist FILE.csv --collection 0x… --from WALLET [--failed OUT.csv]
       nft-ops [--chain CHAIN] edition create --collection 0x… --from WALLET --cost WEI --max-supply N --max-per-tx N
       nft-ops mcp    (the service's MCP tools over stdio, for desktop clients)

job: runs the CSV (rows "address,amount" for an airdrop, "address,amount,tokenId" for an airdrop
on an ERC-1155 edition contract, "address" for a whitelist; a header row is optional, and gives
the columns' order) as a job of the service at NFT_OPS_URL (default http://127.0.0.1:3000), with
the access key NFT_OPS_KEY, and follows it to its end.
edition create: creates the next edition of an ERC-1155 edition contract, owned by WALLET (price
in wei, --max-supply 0 for an open edition) and prints its tokenId.
--chain names the chain (its id or name; GET /chains lists them): required when the service serves
several.

Exit status: 0 done (every row confirmed; the edition created); 1 rows failed (written to
--failed, default FILE.failed.csv), the job paused or was cancelled, or the edition's transaction
failed; 2 a usage error, or a request the service refused (nothing ran).`;

const MAX_FILE_BYTES = 10 * 1024 * 1024;
const FINISHED = new Set(["completed", "failed", "cancelled", "paused"]);

/** Where the CLI writes: the summary to `out`, the progress bar and errors to `err`. */
export interface CliStreams {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream & { isTTY?: boolean };
}

class UsageError extends Error {}

/** What the command line asks for: a job to run, or an edition to create. */
type Command =
  | {
      command: "job";
      kind: "airdrop" | "whitelist";
      file: string;
      collection: string;
      from: string;
      chain?: string;
      failedFile: string;
    }
  | {
      command: "edition";
      collection: string;
      from: string;
      chain?: string;
      cost: string;
      maxSupply: string;
      maxPerTx: string;
    };

const WHOLE = /^\d{1,78}$/;

function parse(argv: string[]): Command {
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
        cost: { type: "string" },
        "max-supply": { type: "string" },
        "max-per-tx": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) throw new UsageError("");
  const [command, kind, file, ...extra] = positionals;
  if (command === "edition")
    return parseEdition(
      values,
      kind,
      [file, ...extra].filter((p) => p !== undefined),
    );
  if (command !== "job") throw new UsageError(`unknown command ${command ?? "(none)"}`);
  if (kind !== "airdrop" && kind !== "whitelist") throw new UsageError(`unknown job kind ${kind ?? "(none)"}`);
  if (!file) throw new UsageError("FILE.csv is required");
  if (extra.length > 0) throw new UsageError(`unexpected ${extra.join(" ")}`);
  if (!values.collection) throw new UsageError("--collection is required");
  if (!values.from) throw new UsageError("--from is required");
  return {
    command: "job",
    kind: kind as "airdrop" | "whitelist",
    file,
    collection: values.collection,
    from: values.from,
    chain: values.chain,
    failedFile: values.failed ?? `${file.replace(/\.csv$/i, "")}.failed.csv`,
  };
}

/** `edition create`: every field given, each number a whole one (the service checks the rest). */
function parseEdition(
  values: Record<string, string | boolean | undefined>,
  action: string | undefined,
  extra: string[],
) {
  if (action !== "create") throw new UsageError(`unknown edition action ${action ?? "(none)"}`);
  if (extra.length > 0) throw new UsageError(`unexpected ${extra.join(" ")}`);
  const text = (name: string) => {
    const value = values[name];
    if (typeof value !== "string") throw new UsageError(`--${name} is required`);
    return value;
  };
  const whole = (name: string) => {
    const value = text(name);
    if (!WHOLE.test(value)) throw new UsageError(`--${name} must be a whole number, not ${value}`);
    return value;
  };
  return {
    command: "edition" as const,
    collection: text("collection"),
    from: text("from"),
    chain: typeof values.chain === "string" ? values.chain : undefined,
    cost: whole("cost"),
    maxSupply: whole("max-supply"),
    maxPerTx: whole("max-per-tx"),
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
  if (args.command === "job") {
    const problem = fileProblem(args.file);
    if (problem) {
      complain(`nft-ops: ${problem}`);
      return 2;
    }
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
  const io = { say, complain, err: streams.err };
  return args.command === "job" ? runJob(client, args, io) : createEdition(client, args, io);
}

type Client = ReturnType<typeof createClient<paths>>;
interface Io {
  say(text: string): void;
  complain(text: string): void;
  err: CliStreams["err"];
}

/** Why the CSV cannot be sent, or undefined. */
function fileProblem(file: string): string | undefined {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return `cannot read ${file}`;
  }
  return size > MAX_FILE_BYTES ? `${file} is over 10 MB: split it into several jobs` : undefined;
}

/** Says what the service refused (its code, message and each detail); the exit status: 1 for its own failure, else 2. */
function refused(what: string, answer: { error?: unknown; response: Response }, io: Io): number {
  const error = (
    answer.error as { error?: { code: string; message: string; details?: { path: string; message: string }[] } }
  )?.error;
  io.complain(
    `nft-ops: the service refused ${what} (${answer.response.status} ${error?.code ?? ""}): ${error?.message ?? ""}`,
  );
  for (const detail of error?.details ?? []) io.complain(`  ${detail.path}: ${detail.message}`);
  return answer.response.status >= 500 ? 1 : 2;
}

async function runJob(client: Client, args: Extract<Command, { command: "job" }>, io: Io): Promise<number> {
  const { say, complain } = io;
  const created = await client.POST("/jobs", {
    params: { query: { kind: args.kind, contractAddress: args.collection, from: args.from } },
    // The CSV goes as it is: the service reads and checks every row.
    body: readFileSync(args.file, "utf8") as never,
    bodySerializer: (body: unknown) => body as string,
    headers: { "Content-Type": "text/csv" },
  });
  if (!created.data) return refused("the job", created, io);
  const jobId = created.data.jobId!;
  say(`job ${jobId}: ${count(created.data.rows, "row")} in ${count(created.data.batches, "batch", "batches")}`);

  const bar = new SingleBar({
    format: "{bar} {percentage}% | {value}/{total} rows | {status}",
    stream: io.err as NodeJS.WriteStream,
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

/**
 * `edition create`: POST /nft/createEdition, followed to its confirmation when the service answers
 * before it (202), then its tokenId printed (`tokenId N`, alone on its line, for scripts).
 */
async function createEdition(client: Client, args: Extract<Command, { command: "edition" }>, io: Io) {
  const created = await client.POST("/nft/createEdition", {
    body: {
      contractAddress: args.collection,
      from: args.from,
      cost: args.cost,
      maxSupply: args.maxSupply,
      maxMintAmountPerTx: args.maxPerTx,
    },
  });
  if (!created.data) return refused("the edition", created, io);
  const answer = created.data;
  // The document's 200 is also a dry run's plan; this call asks for none.
  if ("dryRun" in answer) throw new Error("POST /nft/createEdition answered a dry run's plan");
  const { operationId } = answer;
  let tokenId = answer.status === "confirmed" ? answer.tokenId : undefined;
  while (tokenId === undefined) {
    await sleep(500);
    const answer = await client.GET("/nft/operations/{operationId}", { params: { path: { operationId } } });
    if (!answer.data) {
      io.complain(`nft-ops: GET /nft/operations/${operationId} answered ${answer.response.status}`);
      return 1;
    }
    const op = answer.data;
    if (op.status === "failed") {
      io.complain(`nft-ops: the edition's transaction failed (${op.error?.code ?? ""}): ${op.error?.message ?? ""}`);
      return 1;
    }
    if (op.status === "confirmed") tokenId = String((op.result as { tokenId?: unknown } | undefined)?.tokenId);
  }
  io.say(`edition ${tokenId} created on ${args.collection} (operation ${operationId})`);
  io.say(`tokenId ${tokenId}`);
  return 0;
}

/** "1 batch", "2 batches". */
function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
