/**
 * What following operations until final costs in JSON-RPC calls (issue 38), counted at a proxy
 * between the service and a `hardhat node` (automine off: this script mines).
 *
 *   1. BENCH_OPS mints, answered confirmed, then BENCH_BLOCKS blocks mined one by one while they
 *      wait for FINALITY_BLOCKS: calls per block with that many operations followed;
 *   2. the same blocks once every operation is final: calls per block with none followed
 *      (the baseline, the same process: the block feed and the collections index still run).
 *
 * Check: following adds at most one HTTP request (one JSON-RPC batch) per block, whatever the
 * number of operations. Exits 1 when it does not. Run: npm run bench:finality
 */
import { ApiClient, ChainNode, DEV_KEYS, ServiceProcess, deployWithScript, sleep } from "../test/api/harness";
import { ChainControl } from "../test/support/chain-control";
import { RpcProxy } from "../test/support/rpc-proxy";
import { checked, envSized, sized } from "./smoke";

const OPS = envSized("BENCH_OPS", 50, 5);
const BLOCKS = envSized("BENCH_BLOCKS", 20, 3);
const FINALITY = 64;

interface Count {
  http: number;
  calls: Map<string, number>;
}

function countOf(proxy: RpcProxy): Count {
  return { http: proxy.httpRequests, calls: new Map(proxy.calls) };
}

function perBlock(before: Count, after: Count): { http: number; byMethod: Record<string, number> } {
  const byMethod: Record<string, number> = {};
  for (const [method, n] of after.calls) {
    const d = n - (before.calls.get(method) ?? 0);
    if (d > 0) byMethod[method] = Number((d / BLOCKS).toFixed(2));
  }
  return { http: Number(((after.http - before.http) / BLOCKS).toFixed(2)), byMethod };
}

/** Mines BLOCKS blocks, one every 400 ms (the service polls every 100 ms: it sees each). */
async function mineSlowly(chain: ChainControl): Promise<void> {
  for (let i = 0; i < BLOCKS; i++) {
    await chain.mine();
    await sleep(400);
  }
}

async function main(): Promise<void> {
  const node = await ChainNode.start();
  const proxy = await RpcProxy.start(node.rpcUrl);
  let service: ServiceProcess | undefined;
  try {
    const collection = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "100000" });
    const chain = new ChainControl(node.rpcUrl);
    await chain.setAutomine(false);
    service = await ServiceProcess.start({
      rpcUrl: proxy.url,
      env: { BLOCK_POLL_MS: "100", TX_TIMEOUT_MS: "20000", FINALITY_BLOCKS: String(FINALITY) },
    });
    const api = new ApiClient(service.url);
    const answers = Array.from({ length: OPS }, () =>
      api.post("/nft/mint", { privateKey: DEV_KEYS[3], contractAddress: collection, mintAmount: 1 }),
    );
    // Mined until every mint is answered: on a loaded machine some are sent after the first block.
    let answered = false;
    const all = Promise.all(answers).finally(() => (answered = true));
    await sleep(sized(3_000, 1_000));
    do {
      await chain.mine();
      await sleep(500);
    } while (!answered);
    const settled = await all;
    const confirmed = settled.filter((a) => a.status === 200).length;
    if (confirmed !== OPS) throw new Error(`${OPS - confirmed} mints not answered 200`);
    await sleep(sized(1_000, 300));

    const a0 = countOf(proxy);
    await mineSlowly(chain);
    const following = perBlock(a0, countOf(proxy));

    await chain.mine(FINALITY); // every operation is final now
    await sleep(sized(2_000, 500));
    const b0 = countOf(proxy);
    await mineSlowly(chain);
    const none = perBlock(b0, countOf(proxy));

    const extraHttp = following.http - none.http;
    const receiptCalls = following.byMethod.eth_getTransactionReceipt ?? 0;
    console.log(
      `following ${OPS} confirmed, not yet final operations over ${BLOCKS} blocks (JSON-RPC calls per block):`,
    );
    console.log(`  with them followed: ${following.http} HTTP requests/block, ${JSON.stringify(following.byMethod)}`);
    console.log(`  once all are final: ${none.http} HTTP requests/block, ${JSON.stringify(none.byMethod)}`);
    console.log(
      `  added by following: ${extraHttp.toFixed(2)} HTTP requests/block; receipt lookups ${receiptCalls}/block`,
    );
    const ok = extraHttp <= 1 && receiptCalls <= 1;
    console.log(
      `${ok ? "PASS" : "FAIL"}: following adds at most one batch per block, whatever the number of operations`,
    );
    process.exitCode = checked(ok ? 0 : 1);
  } finally {
    await service?.stop();
    await proxy.close();
    await node.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
