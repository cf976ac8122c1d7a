import { z } from "zod";
import { parseChains, type ChainSpec } from "./chains-config";
import { ConfigError } from "./config-error";

export { ConfigError };

/** The service's configuration, parsed once at start from the environment. */
export interface Config {
  port: number;
  host: string;
  /** Port of the separate listener for /v2/user; unset = served on `port`. */
  demoPort?: number;
  /** JSON-RPC endpoint(s), as set (RPC_URL, comma-separated); unset = the embedded Hardhat chain. */
  rpcUrl?: string;
  /** RPC_URL's URLs, in the order given (failover order); empty = the embedded chain. */
  rpcUrls: string[];
  /** RPC_MAX_LAG_BLOCKS: a URL whose head is more than this below the highest seen is `behind`. */
  rpcMaxLagBlocks: number;
  /** CHAIN_START_TIMEOUT_MS: how long a start waits for RPC_URL's chain to answer its id (a chain in CHAINS never waits). */
  chainStartTimeoutMs: number;
  /** CHAINS: every chain the service serves; unset = RPC_URL's chain or the embedded chain. */
  chains?: ChainSpec[];
  /** Port the embedded chain's JSON-RPC is served on. */
  chainPort: number;
  contractAddress?: string;
  apiKey?: string;
  databaseUrl?: string;
  /** Where PGlite keeps its files when `databaseUrl` is unset. */
  dataDir: string;
  txTimeoutMs: number;
  confirmations: number;
  /** Bound on one JSON-RPC round trip; past it the chain counts as unavailable. */
  rpcTimeoutMs: number;
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** "pretty" when stdout is a terminal under "auto" (pino-pretty), else JSON lines. */
  logFormat: "auto" | "json" | "pretty";
  /** On SIGTERM/SIGINT, how long requests in flight may take to finish before connections are cut. */
  shutdownTimeoutMs: number;
  /** How long a client may take to send a whole request (headers and body); Node's requestTimeout. */
  requestTimeoutMs: number;
  /** How long a client may take to send a request's headers; Node's headersTimeout. */
  headersTimeoutMs: number;
  /** New blocks an unmined transaction waits before it is replaced with higher fees. */
  txResendBlocks: number;
  /** Blocks deep an operation is taken as final where the node has no finalized block (FINALITY_BLOCKS). */
  finalityBlocks: number;
  /** Tests only: the step of a write at which the process kills itself (CRASH_AT). */
  crashAt?: "nonce-taken" | "row-stored" | "broadcast" | "resign-nonce-taken" | "approved";
  /** Tests only: stall this long at CRASH_AT instead of dying there (CRASH_PAUSE_MS): a slow process. */
  crashPauseMs?: number;
  /** Ceiling on maxFeePerGas (wei) for new and replacement transactions; unset = no cap. */
  maxFeePerGas?: bigint;
  /** Take the client address from X-Forwarded-For (behind a reverse proxy). */
  trustProxy: boolean;
  /** How often the chain head is polled while writes are in flight. */
  blockPollMs: number;
  /** REQUIRE_ACCESS_KEY: the seed's open /nft routes need an access key too. */
  requireAccessKey: boolean;
  /** MCP: the /mcp endpoint (API.md, "MCP"); false = not served. */
  mcp: boolean;
  /** WALLET_MASTER_KEY: 32 bytes that encrypt the wallets' keys at rest; unset in embedded mode = made in DATA_DIR. */
  walletMasterKey?: Buffer;
  /** PKCS#11 token of the `pkcs11` wallets: the module's path, the token's label and its user PIN. */
  pkcs11?: { module: string; tokenLabel: string; pin: string };
  /** MAX_COLLECTIONS_PER_KEY: collections one access key may register with POST /collections. */
  maxCollectionsPerKey: number;
  /**
   * WEBHOOK_ALLOW_PRIVATE: webhook URLs may resolve to loopback and private addresses (development,
   * tests). Unset: true on the embedded dev chain (neither RPC_URL nor CHAINS), false on any other.
   */
  webhookAllowPrivate: boolean;
  /** MAX_GAS_PER_TX: the most gas one airdrop or batch whitelist may take; unset = a third of the block gas limit. */
  maxGasPerTx?: bigint;
  /** JOB_CONCURRENCY: batches of one job unconfirmed at once, across every instance. */
  jobConcurrency: number;
  /** PUBLIC_URL: where the world reaches the service (hosted metadata's base URI); unset = http://HOST:PORT. */
  publicUrl?: string;
  /** REVEAL_DELAY_BLOCKS: blocks from a metadata commit to the block whose hash fixes the reveal. */
  revealDelayBlocks: number;
  /** APPROVAL_TTL_HOURS: how long a write held for approval waits before it fails with APPROVAL_EXPIRED. */
  approvalTtlHours: number;
  /** METADATA_REQUESTS_PER_MINUTE: public metadata documents one client address may fetch a minute; 0 = no limit. */
  metadataRequestsPerMinute: number;
}

const port = z.coerce.number().int().min(0).max(65535);
const blankToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blankToUndefined, schema.optional());

const boolean = optional(
  z.enum(["true", "false", "1", "0"], { error: "must be true or false" }).transform((v) => v === "true" || v === "1"),
);

/** A master key as 64 hex characters or base64 of 32 bytes; null for anything else. */
export function masterKeyBytes(value: string): Buffer | null {
  const text = value.trim();
  if (/^(0x)?[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text.replace(/^0x/, ""), "hex");
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) {
    const bytes = Buffer.from(text, "base64");
    if (bytes.length === 32) return bytes;
  }
  return null;
}

const EnvSchema = z
  .object({
    PORT: optional(port).default(3000),
    HOST: optional(z.string()).default("127.0.0.1"),
    DEMO_PORT: optional(port),
    RPC_URL: optional(
      z
        .string()
        .transform((v) => v.split(",").map((url) => url.trim()))
        .pipe(
          z
            .array(
              z.url({
                protocol: /^(https?|wss?)$/,
                error: "must be an http(s) or ws(s) URL (or several, comma-separated)",
              }),
            )
            .refine((urls) => new Set(urls).size === urls.length, "lists a URL twice"),
        ),
    ),
    CHAINS: optional(z.string()),
    CHAIN_PORT: optional(port).default(8545),
    CONTRACT_ADDRESS: optional(z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 20-byte hex address")),
    API_KEY: optional(z.string().min(16, "must be at least 16 characters")),
    DATABASE_URL: optional(z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")),
    DATA_DIR: optional(z.string()).default(".data"),
    TX_TIMEOUT_MS: optional(z.coerce.number().int().positive()).default(60_000),
    CONFIRMATIONS: optional(z.coerce.number().int().min(1).max(64)).default(1),
    RPC_TIMEOUT_MS: optional(z.coerce.number().int().positive()).default(5_000),
    RPC_MAX_LAG_BLOCKS: optional(z.coerce.number().int().min(0).max(10_000)).default(5),
    CHAIN_START_TIMEOUT_MS: optional(z.coerce.number().int().min(0).max(3_600_000)).default(60_000),
    LOG_LEVEL: optional(z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])).default("info"),
    BLOCK_POLL_MS: optional(z.coerce.number().int().min(50).max(60_000)).default(500),
    LOG_FORMAT: optional(z.enum(["auto", "json", "pretty"])).default("auto"),
    SHUTDOWN_TIMEOUT_MS: optional(z.coerce.number().int().min(0).max(600_000)).default(10_000),
    // The largest body (a 10 MB CSV) at a slow client's 100 kB/s is 100 s; headers (≤ 16 kB) take a second.
    REQUEST_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(3_600_000)).default(120_000),
    HEADERS_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(3_600_000)).default(20_000),
    TX_RESEND_BLOCKS: optional(z.coerce.number().int().min(1).max(1000)).default(3),
    FINALITY_BLOCKS: optional(z.coerce.number().int().min(1).max(10_000)).default(64),
    // Fault injection for the crash tests (issue 31): the process kills itself with SIGKILL at that step of its first write.
    CRASH_AT: optional(z.enum(["nonce-taken", "row-stored", "broadcast", "resign-nonce-taken", "approved"])),
    // With CRASH_AT, stall that long there instead (issue 51: a re-sign between its nonce and its record).
    CRASH_PAUSE_MS: optional(z.coerce.number().int().min(1).max(600_000)),
    MAX_FEE_PER_GAS: optional(
      z
        .string()
        .regex(/^\d{1,78}$/, "must be a whole number of wei")
        .transform((v) => BigInt(v))
        .refine((v) => v > 0n, "must be above 0"),
    ),
    TRUST_PROXY: boolean.default(false),
    REQUIRE_ACCESS_KEY: boolean.default(false),
    MCP: boolean.default(true),
    WALLET_MASTER_KEY: optional(
      z
        .string()
        .transform((v) => masterKeyBytes(v))
        .refine((v): v is Buffer => v !== null, "must be 32 bytes, as 64 hex characters or base64")
        .transform((v) => v as Buffer),
    ),
    PKCS11_MODULE: optional(z.string()),
    PKCS11_TOKEN_LABEL: optional(z.string()),
    PKCS11_PIN: optional(z.string()),
    WEBHOOK_ALLOW_PRIVATE: boolean,
    MAX_COLLECTIONS_PER_KEY: optional(z.coerce.number().int().min(0).max(1_000_000_000)).default(1_000),
    MAX_GAS_PER_TX: optional(
      z
        .string()
        .regex(/^\d{1,20}$/, "must be a whole number of gas")
        .transform((v) => BigInt(v))
        .refine((v) => v >= 21_000n, "must be at least 21000"),
    ),
    JOB_CONCURRENCY: optional(z.coerce.number().int().min(1).max(64)).default(4),
    PUBLIC_URL: optional(
      z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).transform((v) => v.replace(/\/+$/, "")),
    ),
    // The contract takes 1 to 256 (MAX_REVEAL_DELAY).
    REVEAL_DELAY_BLOCKS: optional(z.coerce.number().int().min(1).max(256)).default(5),
    APPROVAL_TTL_HOURS: optional(z.coerce.number().positive().max(8760)).default(24),
    METADATA_REQUESTS_PER_MINUTE: optional(z.coerce.number().int().min(0).max(1_000_000)).default(1_200),
  })
  .superRefine((env, ctx) => {
    const pkcs11 = [env.PKCS11_MODULE, env.PKCS11_TOKEN_LABEL, env.PKCS11_PIN];
    if (pkcs11.some((v) => v !== undefined) && pkcs11.some((v) => v === undefined)) {
      const missing = ["PKCS11_MODULE", "PKCS11_TOKEN_LABEL", "PKCS11_PIN"].find((_, i) => pkcs11[i] === undefined)!;
      ctx.addIssue({ code: "custom", path: [missing], message: "is required with the other PKCS11_ settings" });
    }
    if (env.RPC_URL && !env.API_KEY) {
      ctx.addIssue({ code: "custom", path: ["API_KEY"], message: "is required when RPC_URL is set" });
    }
    if (env.CHAINS && !env.API_KEY) {
      ctx.addIssue({ code: "custom", path: ["API_KEY"], message: "is required when CHAINS is set" });
    }
    if (env.CHAINS && env.RPC_URL) {
      ctx.addIssue({
        code: "custom",
        path: ["RPC_URL"],
        message: "must not be set with CHAINS (name each chain's URLs there)",
      });
    }
  });

/** Parses the environment, or throws a ConfigError whose message is one line naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = EnvSchema.safeParse(env);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ConfigError(`Invalid configuration: ${String(issue.path[0])} ${issue.message}`);
  }
  const e = result.data;
  const defaults = {
    confirmations: e.CONFIRMATIONS,
    finalityBlocks: e.FINALITY_BLOCKS,
    txResendBlocks: e.TX_RESEND_BLOCKS,
    maxFeePerGas: e.MAX_FEE_PER_GAS,
  };
  return {
    port: e.PORT,
    host: e.HOST,
    demoPort: e.DEMO_PORT,
    rpcUrl: e.RPC_URL?.join(","),
    rpcUrls: e.RPC_URL ?? [],
    rpcMaxLagBlocks: e.RPC_MAX_LAG_BLOCKS,
    chainStartTimeoutMs: e.CHAIN_START_TIMEOUT_MS,
    chains: e.CHAINS === undefined ? undefined : parseChains(e.CHAINS, defaults),
    chainPort: e.CHAIN_PORT,
    contractAddress: e.CONTRACT_ADDRESS,
    apiKey: e.API_KEY,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    txTimeoutMs: e.TX_TIMEOUT_MS,
    confirmations: e.CONFIRMATIONS,
    rpcTimeoutMs: e.RPC_TIMEOUT_MS,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    headersTimeoutMs: Math.min(e.HEADERS_TIMEOUT_MS, e.REQUEST_TIMEOUT_MS),
    txResendBlocks: e.TX_RESEND_BLOCKS,
    finalityBlocks: e.FINALITY_BLOCKS,
    crashAt: e.CRASH_AT,
    crashPauseMs: e.CRASH_PAUSE_MS,
    maxFeePerGas: e.MAX_FEE_PER_GAS,
    trustProxy: e.TRUST_PROXY,
    blockPollMs: e.BLOCK_POLL_MS,
    requireAccessKey: e.REQUIRE_ACCESS_KEY,
    mcp: e.MCP,
    walletMasterKey: e.WALLET_MASTER_KEY,
    pkcs11:
      e.PKCS11_MODULE && e.PKCS11_TOKEN_LABEL && e.PKCS11_PIN
        ? { module: e.PKCS11_MODULE, tokenLabel: e.PKCS11_TOKEN_LABEL, pin: e.PKCS11_PIN }
        : undefined,
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE ?? (e.RPC_URL === undefined && e.CHAINS === undefined),
    maxCollectionsPerKey: e.MAX_COLLECTIONS_PER_KEY,
    maxGasPerTx: e.MAX_GAS_PER_TX,
    jobConcurrency: e.JOB_CONCURRENCY,
    publicUrl: e.PUBLIC_URL,
    revealDelayBlocks: e.REVEAL_DELAY_BLOCKS,
    approvalTtlHours: e.APPROVAL_TTL_HOURS,
    metadataRequestsPerMinute: e.METADATA_REQUESTS_PER_MINUTE,
  };
}
