/**
 * What both entries run once the configuration is read: the production one (server/cli.ts, RPC_URL
 * only) and `npm start` (scripts/start.ts, which may bring the embedded chain). One process: it
 * logs what would kill it silently, prints the banner, and stops gracefully on SIGTERM/SIGINT.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { collectionInterface } from "../chain/collection";
import { ConfigError, loadConfig, type Config } from "../config/config";
import { credentialFragments, credentialScrubber, maskUrl } from "../config/credentials";
import { createLogger, wantsPrettyLogs, type Logger } from "../http/logger";
import type { ChainDataCleared } from "../chain/store-binding";
import { startService, type RunningService } from "./main";
import { masterKeyPath } from "../wallets/master-key";
import { logProcessErrors, stopOnSignals } from "../runtime/process-handlers";
import type { ChainSource } from "../runtime/chain-source";
import { keptRootKey, type KeptRootKey } from "../runtime/root-key-file";

/** Past the drain bound, how long shutdown hooks and closing the store may take before exit(1). */
const CLOSE_GRACE_MS = 10_000;

export type { ChainSource };

/** The configuration, or exit 1 with the one-line message naming the bad variable. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}

/** The service's logger: credentials of RPC_URL and DATABASE_URL scrubbed, pretty on a terminal. */
export function serviceLogger(config: Config): Logger {
  return createLogger(config.logLevel, undefined, {
    secretUrls: [...rpcUrlsOf(config), config.databaseUrl],
    pretty: wantsPrettyLogs(config.logFormat, process.stdout.isTTY === true),
  });
}

/**
 * Starts the chain `startChain` brings (or uses RPC_URL), then the service; prints the banner and
 * serves until a signal. A failure to start is printed as one line, credentials masked, and exits 1.
 */
export async function runService(
  config: Config,
  logger: Logger,
  startChain?: () => Promise<ChainSource>,
): Promise<void> {
  logProcessErrors(logger);
  try {
    const chainSource = await startChain?.();
    collectionInterface(); // the collection's ABI: fail now, not at the first request
    // The embedded chain's root key is kept in its data directory (a restart keeps the reader's $API_KEY).
    const kept = config.apiKey || !chainSource ? undefined : await keptRootKey(config.dataDir);
    const apiKey = config.apiKey ?? kept?.key ?? randomBytes(24).toString("base64url");
    const service = await startService({ ...config, apiKey }, logger, {
      connect: chainSource?.connect,
      // The embedded dev chain makes a master key for its data directory when none is set.
      masterKeyFile: chainSource ? masterKeyPath(config.dataDir) : undefined,
      // The embedded chain keeps nothing across restarts: neither may the store's chain data.
      freshChain: chainSource !== undefined,
      fundingHint: chainSource?.fundingHint,
    });
    const prepared = (await chainSource?.prepare?.(service)) ?? {};
    console.log(
      banner(config, service, {
        rpc: chainSource
          ? `${chainSource.rpcUrl}   (${chainSource.note})`
          : (config.rpcUrls ?? []).map((url) => maskUrl(url)).join(", "),
        contractAddress: prepared.contractAddress ?? config.contractAddress,
        ownerKey: prepared.ownerKey,
        testToken: prepared.testToken,
        apiKey: config.apiKey ? undefined : { key: apiKey, kept },
        embedded: chainSource !== undefined,
      }),
    );
    stopOnSignals(
      logger,
      async () => {
        await service.close();
        await chainSource?.close();
      },
      config.shutdownTimeoutMs + CLOSE_GRACE_MS,
    );
  } catch (err) {
    const scrub = credentialScrubber([...rpcUrlsOf(config), config.databaseUrl].flatMap(credentialFragments));
    console.error(scrub(`Failed to start: ${err instanceof Error ? err.message : String(err)}`));
    process.exit(1);
  }
}

/** Every RPC URL the configuration names (RPC_URL's, or every chain's in CHAINS): their credentials are scrubbed. */
function rpcUrlsOf(config: Config): string[] {
  return [...(config.rpcUrls ?? []), ...(config.chains ?? []).flatMap((chain) => chain.rpcUrls)];
}

/** Where the wallets' master key is: a setting or a file, never the key. */
function masterKeyLine({ from, file, created }: RunningService["masterKey"]): string {
  if (from === "WALLET_MASTER_KEY") return "WALLET_MASTER_KEY   (from the environment)";
  if (from === "file")
    return `${file}   (${created ? "made now for this data directory" : "this data directory's"}; keep it with the store, or set WALLET_MASTER_KEY)`;
  return "none   (set WALLET_MASTER_KEY to hold local wallets)";
}

/** The root key: from the environment (never shown), kept in the data directory, or random for this run. */
function apiKeyLine(shown?: { key: string; kept?: KeptRootKey }): string {
  if (!shown) return "(from the environment)";
  if (!shown.kept) return `${shown.key}   (random for this run)`;
  const { file, created } = shown.kept;
  return `${shown.key}   (${created ? "made now, kept in" : "kept in"} ${file}: the same at every start; set API_KEY to use another)`;
}

/** What a fresh chain's start cleared of the previous one: the banner says how much, and what stays. */
function clearedLine(cleared: ChainDataCleared): string {
  const n = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;
  const parts = [
    n(cleared.operations, "operation"),
    n(cleared.idempotencyKeys, "idempotency key"),
    n(cleared.nonces, "nonce"),
    n(cleared.collections, "indexed collection"),
    n(cleared.webhookEvents, "undelivered webhook event"),
  ];
  return `the embedded chain starts fresh: cleared the previous chain's ${parts.join(", ")}; wallets, access keys, webhooks, users and audit events kept`;
}

function banner(
  config: Config,
  service: RunningService,
  shown: {
    rpc: string;
    contractAddress?: string;
    ownerKey?: string;
    /** The embedded chain's test stablecoin (TUSD). */
    testToken?: string;
    apiKey?: { key: string; kept?: KeptRootKey };
    embedded: boolean;
  },
): string {
  return [
    "NFT contract operations service",
    `  API            ${service.apiUrl}   (docs: ${service.apiUrl}/docs)`,
    ...(service.demoUrl ? [`  Demo users     ${service.demoUrl}/v2/user`] : []),
    ...(service.chains.units.length === 1
      ? [`  RPC            ${shown.rpc}`, `  Chain id       ${service.chain.options.chainId}`]
      : service.chains.units.map(
          (unit) =>
            `  Chain          ${unit.name} (${unit.id})   ${unit.spec.rpcUrls.map((url) => maskUrl(url)).join(", ")}`,
        )),
    ...(shown.contractAddress ? [`  Contract       ${shown.contractAddress}`] : []),
    // Only the embedded chain's owner, Hardhat's public account #0, is ever printed.
    ...(shown.ownerKey ? [`  Owner key      ${shown.ownerKey}   (Hardhat account #0, public: dev only)`] : []),
    ...(shown.testToken
      ? [`  TUSD           ${shown.testToken}   (test stablecoin, 6 decimals, EIP-2612; dev chain only)`]
      : []),
    `  API_KEY        ${apiKeyLine(shown.apiKey)}`,
    `  Store          ${config.databaseUrl ? maskUrl(config.databaseUrl) : `PGlite in ${path.join(config.dataDir, "pglite")}`}`,
    `  Master key     ${masterKeyLine(service.masterKey)}`,
    ...(config.webhookAllowPrivate
      ? [
          `  Webhooks       may reach loopback and private addresses   (${shown.embedded ? "the embedded dev chain's default: WEBHOOK_ALLOW_PRIVATE=false refuses them" : "WEBHOOK_ALLOW_PRIVATE=true"})`,
        ]
      : []),
    ...(service.chainDataCleared ? [`  Chain data     ${clearedLine(service.chainDataCleared)}`] : []),
  ].join("\n");
}
