/**
 * `npm start`: the service as API.md's runtime shape describes it, in one Node process that
 * receives signals itself. With no RPC_URL, Hardhat is loaded as a library: the in-process network
 * is what the service talks to (no HTTP loopback), also served as JSON-RPC on CHAIN_PORT, and the
 * reference collection is deployed from account #0. With RPC_URL, Hardhat is not loaded (unless
 * the contracts were never compiled) and nothing is deployed.
 */
import { collectionArtifactAvailable } from "../server/chain/collection";
import { loadConfigOrExit, runService, serviceLogger } from "../server/app/run";

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = serviceLogger(config);
  if (config.rpcUrl || config.chains) {
    if (!collectionArtifactAvailable()) await (await import("../server/embedded/embedded-chain")).compileContracts();
    await runService(config, logger);
  } else {
    await runService(config, logger, async () =>
      (await import("../server/embedded/embedded-chain")).startEmbeddedChain(config),
    );
  }
}

void main();
