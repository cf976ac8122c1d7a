/**
 * A chain that behaves like a real one for the engine tests: a `hardhat node` with automine off
 * (the test mines), a fault-injecting JSON-RPC proxy between it and the service, and the service
 * as a child process on its own data directory (so it can be killed and started again on it).
 */
import { rmSync } from "node:fs";
import { expect } from "chai";
import type { JsonRpcProvider, Wallet } from "ethers";
import { ChainControl } from "../support/chain-control";
import { RpcProxy } from "../support/rpc-proxy";
import {
  ApiClient,
  ChainNode,
  ServiceProcess,
  TEST_API_KEY,
  collectionAt,
  deployDirectly,
  deployWithScript,
  directProvider,
  sleep,
  type ApiResponse,
  type JsonBody,
} from "../api/harness";
import { seededDataDir } from "../support/pglite-template";

export interface EngineFixture {
  node: ChainNode;
  proxy: RpcProxy;
  chain: ChainControl;
  provider: JsonRpcProvider;
  collection: string;
  service: ServiceProcess;
  api: ApiClient;
  dataDir: string;
  env: Record<string, string>;
  /** Starts the service again on the same data directory (after `service.kill()`). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startEngineFixture(env: Record<string, string> = {}): Promise<EngineFixture> {
  const node = await ChainNode.start();
  const collection = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "100000" });
  const chain = new ChainControl(node.rpcUrl);
  await chain.setAutomine(false);
  const proxy = await RpcProxy.start(node.rpcUrl);
  const dataDir = await seededDataDir("engine-test-");
  const serviceEnv = {
    TX_TIMEOUT_MS: "2000",
    BLOCK_POLL_MS: "100",
    RPC_TIMEOUT_MS: "1500",
    TX_RESEND_BLOCKS: "3",
    DATA_DIR: dataDir,
    ...env,
  };
  const fixture: EngineFixture = {
    node,
    proxy,
    chain,
    provider: directProvider(node.rpcUrl),
    collection,
    service: await ServiceProcess.start({ rpcUrl: proxy.url, env: serviceEnv }),
    api: undefined as unknown as ApiClient,
    dataDir,
    env: serviceEnv,
    async restart() {
      fixture.service = await ServiceProcess.start({ rpcUrl: proxy.url, env: serviceEnv });
      fixture.api = new ApiClient(fixture.service.url);
    },
    async stop() {
      fixture.provider.destroy();
      await fixture.service.stop();
      await proxy.close();
      await node.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  fixture.api = new ApiClient(fixture.service.url);
  return fixture;
}

/** Waits until the node's mempool holds at least `count` transactions (all senders). */
export async function mempoolHolds(chain: ChainControl, count: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await chain.pendingTransactions()).length < count) {
    if (Date.now() > deadline) throw new Error(`mempool did not reach ${count} transactions`);
    await sleep(25);
  }
}

/** GET /nft/operations/{id}. */
export async function operation(api: ApiClient, id: string): Promise<JsonBody> {
  const res = await api.get(`/nft/operations/${id}`);
  expect(res.status, res.text).to.equal(200);
  return res.body;
}

/**
 * Polls the operation until `done` holds, mining a block between polls when `mine` is set (the
 * follower acts once per new block). Fails after `timeoutMs`.
 */
export async function untilOperation(
  f: EngineFixture,
  id: string,
  done: (op: JsonBody) => boolean,
  { mine = false, timeoutMs = 20_000, pauseMs = 250 } = {},
): Promise<JsonBody> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const op = await operation(f.api, id);
    if (done(op)) return op;
    if (Date.now() > deadline) throw new Error(`operation ${id} still ${JSON.stringify(op)}`);
    if (mine) await f.chain.mine();
    await sleep(pauseMs);
  }
}

export async function totalSupply(f: EngineFixture, collection = f.collection): Promise<bigint> {
  return (await collectionAt(collection, f.provider).totalSupply()) as bigint;
}

export function mintBody(f: EngineFixture, privateKey: string, mintAmount: unknown = 1) {
  return { privateKey, contractAddress: f.collection, mintAmount };
}

/**
 * Two mints racing for the last token of a new collection (max supply 1, deployed by `owner`):
 * both simulate well against the same state, are mined in one block, and the second reverts on
 * chain. Answers the new collection and both answers, in the order of `keys`.
 */
export async function mintsRacingForLastToken(
  f: EngineFixture,
  owner: Wallet,
  keys: [string, string],
): Promise<{ lastOne: string; answers: ApiResponse[] }> {
  await f.chain.setAutomine(true);
  const lastOne = await deployDirectly(owner.connect(f.provider), { maxSupply: 1n, cost: 0n });
  await f.chain.setAutomine(false);
  const racing = Promise.all(
    keys.map((privateKey) => f.api.post("/nft/mint", { privateKey, contractAddress: lastOne, mintAmount: 1 })),
  );
  await mempoolHolds(f.chain, 2);
  await f.chain.mine();
  return { lastOne, answers: await racing };
}

/** Sends a request and, while it is in flight, mines a block as soon as `count` transactions wait. */
export async function minedWhenSent(f: EngineFixture, request: Promise<ApiResponse>, count = 1): Promise<ApiResponse> {
  await mempoolHolds(f.chain, count);
  await f.chain.mine();
  return request;
}

/**
 * /metrics' operations_sharing_transaction (issue 51): operations of the store that share a
 * transaction hash or a mined nonce with another. Must be 0.
 */
export async function operationsSharingTransaction(api: ApiClient): Promise<number> {
  const res = await api.request("GET", "/metrics", { headers: { Authorization: `Bearer ${TEST_API_KEY}` } });
  expect(res.status, res.text).to.equal(200);
  const line = /^operations_sharing_transaction (\d+)$/m.exec(res.text);
  if (!line) throw new Error("no operations_sharing_transaction on /metrics");
  return Number(line[1]);
}
