import type { AddressInfo } from "node:net";
import { createServer, type RequestListener, type Server } from "node:http";
import path from "node:path";
import { createApp } from "./app";
import { ChainClient } from "./chain/chain-client";
import { connectProvider } from "./chain/provider";
import type { Config } from "./config/config";
import type { Logger } from "./http/logger";
import { openDatabase } from "./db";
import { openEngine } from "./engine";
import { OPERATION_KINDS } from "./nft";
import { SqlUserStore } from "./users";

export interface RunningService {
  apiUrl: string;
  demoUrl?: string;
  chain: ChainClient;
  close(): Promise<void>;
}

/** Connects to the chain and the user store, builds the app and listens: what `npm start` runs. */
export async function startService(config: Config & { rpcUrl: string }, logger: Logger): Promise<RunningService> {
  const { provider, chainId } = await connectProvider(config.rpcUrl, config.rpcTimeoutMs);
  const chain = new ChainClient(provider, { chainId, maxFeePerGas: config.maxFeePerGas });
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: path.join(config.dataDir, "pglite") });
  const userStore = new SqlUserStore(db);
  const engine = await openEngine({
    chain,
    db,
    kinds: OPERATION_KINDS,
    logger,
    options: {
      chainId,
      confirmations: config.confirmations,
      txTimeoutMs: config.txTimeoutMs,
      resendBlocks: config.txResendBlocks,
      blockPollMs: config.blockPollMs,
    },
  });
  const apps = createApp({
    chain,
    engine,
    userStore,
    database: db,
    logger,
    apiKey: config.apiKey,
    separateDemo: config.demoPort !== undefined,
    trustProxy: config.trustProxy,
  });

  const api = await listen(apps.api.callback(), config.port, config.host);
  const demo =
    apps.demo && config.demoPort !== undefined
      ? await listen(apps.demo.callback(), config.demoPort, config.host)
      : undefined;

  return {
    apiUrl: urlOf(api, config.host),
    demoUrl: demo ? urlOf(demo, config.host) : undefined,
    chain,
    async close() {
      await Promise.all([api, demo].filter((s): s is Server => !!s).map(closeServer));
      // What is unfinished stays in the store: the next start (or another process) follows it on.
      await engine.stop();
      await userStore.close();
      await db.close();
      provider.destroy();
    },
  };
}

async function listen(handler: RequestListener, port: number, host: string): Promise<Server> {
  const server = createServer(handler);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function urlOf(server: Server, host: string): string {
  const { port } = server.address() as AddressInfo;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
