/**
 * One node + deployed collection + service shared by the test files that only need a healthy
 * chain: starting them costs ~20 s, so it is done once per run. Importing this module registers a
 * root `after` hook (mocha's root suite) that stops them when every file has run.
 */
import type { JsonRpcProvider } from "ethers";
import { ApiClient, ChainNode, ServiceProcess, deployWithScript, directProvider } from "./harness";

export interface SharedService {
  node: ChainNode;
  service: ServiceProcess;
  api: ApiClient;
  provider: JsonRpcProvider;
  /** The reference collection deployed by scripts/deploy.ts with its defaults, owned by account #0. */
  collection: string;
}

let starting: Promise<SharedService> | undefined;

/** Starts the shared fixture on first use; later calls get the same one. */
export function sharedService(): Promise<SharedService> {
  starting ??= start();
  return starting;
}

async function start(): Promise<SharedService> {
  const node = await ChainNode.start();
  // The service needs no contract at start, so the deployment and the start overlap.
  const [deployed, started] = await Promise.allSettled([
    deployWithScript(node.rpcUrl),
    ServiceProcess.start({ rpcUrl: node.rpcUrl, env: { TX_TIMEOUT_MS: "30000" } }),
  ]);
  if (deployed.status === "rejected" || started.status === "rejected") {
    if (started.status === "fulfilled") await started.value.stop();
    await node.stop();
    throw deployed.status === "rejected" ? deployed.reason : (started as PromiseRejectedResult).reason;
  }
  const service = started.value;
  return {
    node,
    service,
    api: new ApiClient(service.url),
    provider: directProvider(node.rpcUrl),
    collection: deployed.value,
  };
}

after(async function () {
  this.timeout(30_000);
  if (!starting) return;
  const shared = await starting.catch(() => undefined);
  if (!shared) return;
  shared.provider.destroy();
  await shared.service.stop();
  await shared.node.stop();
});
