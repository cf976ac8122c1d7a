/**
 * `npm start`: the service as API.md's runtime shape describes it. With no RPC_URL an in-process
 * Hardhat network is served as JSON-RPC on CHAIN_PORT and the reference collection is deployed
 * from account #0; with RPC_URL the service connects to that chain and deploys nothing.
 */
import { randomBytes } from "node:crypto";
import { Wallet } from "ethers";
import hre from "hardhat";
import { TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import type { JsonRpcServer } from "hardhat/types";
import { ChainClient } from "../server/chain/chain-client";
import { DEFAULT_COLLECTION, deployTransaction } from "../server/chain/collection";
import { ConfigError, loadConfig, type Config } from "../server/config/config";
import { createLogger } from "../server/http/logger";
import { startService } from "../server/main";

/** Hardhat's well-known account #0: public knowledge, for the embedded dev chain only. */
const DEV_OWNER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const embedded = !config.rpcUrl;
  let chainServer: JsonRpcServer | undefined;
  let rpcUrl = config.rpcUrl;
  if (!rpcUrl) {
    chainServer = (await hre.run(TASK_NODE_CREATE_SERVER, {
      hostname: "127.0.0.1",
      port: config.chainPort,
      provider: hre.network.provider,
    })) as JsonRpcServer;
    const { port } = await chainServer.listen();
    rpcUrl = `http://127.0.0.1:${port}`;
  }
  const apiKey = config.apiKey ?? randomBytes(24).toString("base64url");
  const service = await startService({ ...config, rpcUrl, apiKey }, logger);

  let contractAddress = config.contractAddress;
  if (embedded && !contractAddress) contractAddress = await deployReference(service.chain);

  const lines = [
    "NFT contract operations service",
    `  API            ${service.apiUrl}   (docs: ${service.apiUrl}/docs)`,
    ...(service.demoUrl ? [`  Demo users     ${service.demoUrl}/v2/user`] : []),
    `  RPC            ${rpcUrl}${embedded ? "   (embedded Hardhat network)" : ""}`,
    `  Chain id       ${service.chain.options.chainId}`,
    ...(contractAddress ? [`  Contract       ${contractAddress}`] : []),
    // The dev key is Hardhat's public account #0; a real key is never printed.
    ...(embedded ? [`  Owner key      ${DEV_OWNER_KEY}   (Hardhat account #0, public: dev only)`] : []),
    embedded && !config.apiKey
      ? `  API_KEY        ${apiKey}   (random for this run)`
      : `  API_KEY        (from the environment)`,
  ];
  console.log(lines.join("\n"));

  const stop = async () => {
    await service.close();
    await chainServer?.close();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

/** The dev chain's reference collection, deployed from account #0 before any request is served. */
async function deployReference(chain: ChainClient): Promise<string> {
  const owner = new Wallet(DEV_OWNER_KEY, chain.provider);
  const sent = await owner.sendTransaction(await deployTransaction(DEFAULT_COLLECTION));
  const receipt = await sent.wait();
  if (!receipt?.contractAddress) throw new Error("Deploying the reference collection did not confirm");
  return receipt.contractAddress;
}

main().catch((err: unknown) => {
  console.error(`Failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
