import { ContractFactory, Interface, Wallet, getCreateAddress } from "ethers";
/**
 * The embedded dev chain of `npm start`: Hardhat used as a library in the service's own process.
 * The service calls the in-process network directly (no HTTP loopback); the same network is also
 * served as JSON-RPC on CHAIN_PORT for outside tools (wallets, scripts, `hardhat console`).
 * Development only: this folder is left out of the production build, which never loads Hardhat.
 */
import type { Server } from "node:http";
import hre from "hardhat";
import { TASK_COMPILE, TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import type { JsonRpcServer } from "hardhat/types";
import { DEFAULT_COLLECTION, deployTransaction } from "../chain/collection";
import { connectInProcess } from "../chain/in-process-provider";
import type { Config } from "../config/config";
import type { ChainSource, PreparedService } from "../runtime/chain-source";

/** Hardhat's well-known account #0: public knowledge, for the embedded dev chain only. */
export const DEV_OWNER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

/** How long closing the JSON-RPC server may wait for outside clients before exit goes on. */
const CLOSE_BOUND_MS = 2_000;

/** Compiles the contracts when their sources changed since the last compilation (cheap when not). */
export async function compileContracts(): Promise<void> {
  await hre.run(TASK_COMPILE, { quiet: true });
}

/**
 * Compiles, serves the in-process Hardhat network on 127.0.0.1:CHAIN_PORT, and describes it for
 * `runService`: the service connects in process and, unless CONTRACT_ADDRESS is set, deploys the
 * reference collection from account #0 once it listens; then the test stablecoin TUSD (`deployTestUsd`).
 */
export async function startEmbeddedChain(config: Config): Promise<ChainSource> {
  await compileContracts();
  const server = (await hre.run(TASK_NODE_CREATE_SERVER, {
    hostname: "127.0.0.1",
    port: config.chainPort,
    provider: hre.network.provider,
  })) as JsonRpcServer;
  const port = await listen(server).catch((err: NodeJS.ErrnoException) => {
    throw err.code === "EADDRINUSE" ? new Error(`CHAIN_PORT ${config.chainPort} is already in use`) : err;
  });
  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    note: "embedded Hardhat network",
    connect: (observer) => connectInProcess(hre.network.provider, observer),
    fundingHint: (address, wei) => fundingHint(port, address, wei),
    prepare: async (service) => ({
      // The collection first: it keeps account #0's first address (nonce 0), as the README shows it.
      contractAddress: config.contractAddress ?? (await deployReference(service)),
      ownerKey: DEV_OWNER_KEY,
      testToken: await deployTestUsd(service),
    }),
    close: () => close(server),
  };
}

/** The embedded chain funds any address at once: hardhat_setBalance on CHAIN_PORT, `wei` and 1 ether to spare. */
function fundingHint(port: number, address: string, wei: bigint): string {
  const balance = `0x${(wei + ONE_ETHER).toString(16)}`;
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "hardhat_setBalance", params: [address, balance] });
  return `On the embedded chain: curl -s http://127.0.0.1:${port} -H 'content-type: application/json' -d '${body}'`;
}

const ONE_ETHER = 10n ** 18n;

/** The dev chain's reference collection, deployed from account #0 before any request is served. */
async function deployReference({ chain, collections }: PreparedService): Promise<string> {
  const owner = new Wallet(DEV_OWNER_KEY, chain.provider);
  const sent = await owner.sendTransaction(await deployTransaction(DEFAULT_COLLECTION));
  const receipt = await sent.wait();
  if (!receipt?.contractAddress) throw new Error("Deploying the reference collection did not confirm");
  await collections.register(receipt.contractAddress, "deploy", receipt.blockNumber);
  return receipt.contractAddress;
}

/** What each of Hardhat's dev accounts is given of TUSD: 1,000 (6 decimals). */
export const TEST_USD_PER_ACCOUNT = 1_000n * 10n ** 6n;

/**
 * The dev chain's test stablecoin, TUSD (contracts/test/TestUSD.sol: 6 decimals, EIP-2612 permits, an open
 * `mint`), deployed from account #0, and 1,000 TUSD to each of Hardhat's dev accounts: two transactions, the
 * second sent without waiting for the first. For checkout on the dev chain only; never on a real one.
 */
async function deployTestUsd({ chain }: PreparedService): Promise<string> {
  const owner = new Wallet(DEV_OWNER_KEY, chain.provider);
  const artifact = await hre.artifacts.readArtifact("TestUSD");
  const accounts = (await hre.network.provider.request({ method: "eth_accounts" })) as string[];
  const nonce = await chain.provider.getTransactionCount(owner.address, "pending");
  const address = getCreateAddress({ from: owner.address, nonce });
  const factory = new ContractFactory(artifact.abi, artifact.bytecode, owner);
  const deploy = await owner.sendTransaction({ ...(await factory.getDeployTransaction()), nonce });
  const fund = await owner.sendTransaction({
    to: address,
    data: new Interface(artifact.abi).encodeFunctionData("mintBatch", [accounts, TEST_USD_PER_ACCOUNT]),
    nonce: nonce + 1,
    // Estimating would run before the deploy is mined: a fixed limit instead (20 first balances, ~50,000 each).
    gasLimit: 100_000n + 30_000n * BigInt(accounts.length),
  });
  const [deployed, funded] = await Promise.all([deploy.wait(), fund.wait()]);
  if (deployed?.contractAddress !== address || funded?.status !== 1) throw new Error("Deploying TUSD did not confirm");
  return address;
}

/**
 * Hardhat's JsonRpcServer keeps its HTTP and WebSocket servers in fields it does not declare.
 * They are reached for what its API lacks: a failed listen (port taken) rejects instead of
 * throwing an unhandled 'error' event, and closing cuts outside clients instead of waiting on them.
 */
interface JsonRpcServerInternals {
  _httpServer?: Server;
  _wsServer?: { on(event: "error", listener: (err: Error) => void): unknown; clients?: Set<{ terminate(): void }> };
}

async function listen(server: JsonRpcServer): Promise<number> {
  const { _httpServer: http, _wsServer: ws } = server as unknown as JsonRpcServerInternals;
  const failed = new Promise<never>((_, reject) => {
    http?.once("error", reject);
    ws?.on("error", reject); // ws re-emits the HTTP server's errors: without a listener they would throw
  });
  const { port } = await Promise.race([server.listen(), failed]);
  return port;
}

async function close(server: JsonRpcServer): Promise<void> {
  const { _httpServer: http, _wsServer: ws } = server as unknown as JsonRpcServerInternals;
  for (const client of ws?.clients ?? []) client.terminate();
  const closed = server.close();
  http?.closeAllConnections();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_BOUND_MS)))]);
  clearTimeout(timer);
}
