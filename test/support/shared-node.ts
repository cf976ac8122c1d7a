/**
 * One `hardhat node` (chain id 31337, automining) shared by the test files that need only a healthy
 * chain to start their own service on: a node start costs about 5 CPU-seconds, and most files did
 * one of their own. Each file deploys its own contracts and uses its own accounts or fresh funded
 * wallets, so what one file leaves on the chain (blocks, collections, balances) does not matter to
 * the next. A file that changes how the chain behaves (automine off, snapshots and reverts, a
 * stopped or killed node, thousands of empty blocks) keeps a node of its own.
 *
 * Importing this module registers a root `after` hook (mocha's root suite) that stops the node when
 * every file has run. A file must never stop it.
 */
import { ChainNode } from "../api/harness";

let starting: Promise<ChainNode> | undefined;

/** Starts the shared node on first use; later calls get the same one. */
export function sharedNode(): Promise<ChainNode> {
  starting ??= ChainNode.start();
  return starting;
}

after(async function () {
  this.timeout(30_000);
  if (!starting) return;
  const node = await starting.catch(() => undefined);
  await node?.stop();
});
