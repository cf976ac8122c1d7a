/**
 * `npm run store:forget-chain` (in production, `node dist/server/runtime/forget-chain-command.js`),
 * with the service stopped: clears what the store (DATABASE_URL, else PGlite in $DATA_DIR) holds
 * about one chain: its operations and their idempotency keys, nonces, the index, and undelivered
 * webhook events; wallets, access keys, webhook endpoints, users and audit events stay. The chain
 * is the one behind RPC_URL (its eth_chainId), `--chain-id N`, or with neither the embedded chain's
 * (31337). What a start refused because the chain lacked the blocks the store had seen. One line.
 */
import path from "node:path";
import { forgetChain } from "../chain/store-binding";
import { connectProvider } from "../chain/provider";
import { loadConfig } from "../config/config";
import { credentialFragments, credentialScrubber } from "../config/credentials";
import { openDatabase } from "../db";

/** Hardhat's chain id: the embedded chain's. */
const EMBEDDED_CHAIN_ID = "31337";

async function chainIdToForget(args: string[], rpcUrl: string | undefined, timeoutMs: number): Promise<string> {
  const flag = args.indexOf("--chain-id");
  if (flag >= 0) {
    const given = args[flag + 1] ?? "";
    if (!/^\d{1,20}$/.test(given)) throw new Error("--chain-id takes a decimal chain id");
    return BigInt(given).toString();
  }
  if (!rpcUrl) return EMBEDDED_CHAIN_ID;
  const { provider, chainId } = await connectProvider(rpcUrl, timeoutMs);
  provider.destroy();
  return chainId.toString();
}

/** Runs the command; answers the line to print, or throws an Error whose message is that line. */
export async function forgetChainFromEnvironment(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  const config = loadConfig(env);
  const chainId = await chainIdToForget(args, config.rpcUrl, config.rpcTimeoutMs);
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: path.join(config.dataDir, "pglite") });
  try {
    const c = await forgetChain(db, chainId);
    return (
      `Forgot chain ${chainId}: ${c.operations} operations (${c.idempotencyKeys} idempotency keys), ${c.nonces} nonces, ` +
      `${c.collections} indexed collections, ${c.webhookEvents} undelivered webhook events; the next start binds the store to the chain it finds`
    );
  } finally {
    await db.close();
  }
}

/** Runs the command: one line on stdout, or one on stderr and exit code 1. */
export function runForgetChainCommand(env: NodeJS.ProcessEnv = process.env, args = process.argv.slice(2)): void {
  forgetChainFromEnvironment(env, args).then(
    (line) => console.log(line),
    (err: unknown) => {
      const scrub = credentialScrubber([env.RPC_URL, env.DATABASE_URL].flatMap(credentialFragments));
      console.error(scrub(err instanceof Error ? err.message : String(err)));
      process.exit(1);
    },
  );
}

if (require.main === module) runForgetChainCommand();
