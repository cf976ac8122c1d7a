/**
 * The soak of issue 38: a separate `hardhat node` mining every second, the service on PGlite
 * behind a JSON-RPC proxy that loses some send answers, answers some calls 502 and stalls others.
 * For SOAK_SECONDS (240), 4 request keys and 2 held wallets each send keyed mints (about 4 a second
 * in all) while the service is SIGKILLed and restarted SOAK_KILLS (6) times; once, the node is
 * reorganised (evm_snapshot, about 3 blocks of mints, evm_revert, 4 empty blocks in their place).
 *
 * Afterwards every Idempotency-Key must replay 200 confirmed, both wallets must report nothing
 * unfinished, the supply must have grown by exactly the number of keys, no two keys may answer with
 * one transaction, and /metrics' operations_sharing_transaction must be 0. Exits 1 otherwise.
 * Run: npm run soak  (SOAK_SEED to repeat a run)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  TEST_API_KEY,
  collectionAt,
  deployWithScript,
  directProvider,
  sleep,
} from "../test/api/harness";
import { ChainControl } from "../test/support/chain-control";
import { RpcProxy } from "../test/support/rpc-proxy";
import { seededRandom as seeded } from "../test/support/seeded-random";
import { processRssMb } from "./proc-cpu";
import { envSized } from "./smoke";

const SECONDS = envSized("SOAK_SECONDS", 240, 10);
const KILLS = envSized("SOAK_KILLS", 6, 1);
const SEED = Number(process.env.SOAK_SEED ?? Date.now() % 100_000);
const ROOT = { Authorization: `Bearer ${TEST_API_KEY}` };

interface Sender {
  name: string;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

async function main(): Promise<void> {
  const random = seeded(SEED);
  console.log(`soak: ${SECONDS} s, ${KILLS} kills, one reorg, SOAK_SEED=${SEED}`);
  const node = await ChainNode.start();
  const chain = new ChainControl(node.rpcUrl);
  const proxy = await RpcProxy.start(node.rpcUrl, { holdMs: 3_000 });
  const provider = directProvider(node.rpcUrl);
  const dataDir = mkdtempSync(path.join(tmpdir(), "soak-"));
  const env = {
    DATA_DIR: dataDir,
    TX_TIMEOUT_MS: "5000",
    BLOCK_POLL_MS: "250",
    RPC_TIMEOUT_MS: "2000",
    WALLET_MASTER_KEY: "22".repeat(32),
  };
  let service: ServiceProcess | undefined;
  try {
    const collection = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "1000000", NFT_MAX_MINT_PER_TX: "5" });
    const nft = collectionAt(collection, provider);
    await chain.setIntervalMining(1_000);
    // The proxy's faults: some send answers lost, some calls answered 502, some stalled 3 s.
    proxy.loseAnswer("eth_sendRawTransaction", { times: Infinity, when: () => random() < 0.05 });
    proxy.loseAnswer("eth_getTransactionReceipt", { times: Infinity, mode: "502", when: () => random() < 0.03 });
    proxy.loseAnswer("eth_getTransactionCount", { times: Infinity, mode: "timeout", when: () => random() < 0.02 });

    service = await ServiceProcess.start({ rpcUrl: proxy.url, env });
    const wallets: string[] = [];
    for (const label of ["soak-a", "soak-b"]) {
      const made = await new ApiClient(service.url).post("/wallets", { kind: "local", label }, ROOT);
      if (made.status !== 201) throw new Error(`POST /wallets: ${made.status} ${made.text}`);
      wallets.push(made.body.address as string);
      await provider.send("hardhat_setBalance", [made.body.address, `0x${(10n ** 21n).toString(16)}`]);
    }
    const senders: Sender[] = [
      ...DEV_KEYS.slice(4, 8).map((privateKey, i) => ({
        name: `key${i}`,
        body: { privateKey, contractAddress: collection, mintAmount: 1 },
        headers: {},
      })),
      ...["soak-a", "soak-b"].map((from) => ({
        name: from,
        body: { from, contractAddress: collection, mintAmount: 1 },
        headers: ROOT,
      })),
    ];
    const supplyBefore = (await nft.totalSupply()) as bigint;
    const keys: Array<{ sender: Sender; key: string }> = [];
    const started = Date.now();
    const end = started + SECONDS * 1000;
    const killAt = Array.from(
      { length: KILLS },
      (_, i) => started + ((i + 0.5 + random() * 0.5) * SECONDS * 1000) / (KILLS + 1),
    );
    const reorgAt = started + SECONDS * 500;
    let reorged = false;
    let current = service;
    let sent = 0;
    const inFlight = new Set<Promise<unknown>>();
    // Each sender: one keyed mint every 1.5 s (4 a second in all), whatever the service's state.
    const loops = senders.map(async (sender) => {
      while (Date.now() < end) {
        const key = `${sender.name}-${sent++}`;
        keys.push({ sender, key });
        const call = new ApiClient(current.url)
          .post("/nft/mint", sender.body, { ...sender.headers, "Idempotency-Key": key })
          .catch(() => null);
        inFlight.add(call);
        void call.finally(() => inFlight.delete(call));
        await sleep(1_500);
      }
    });
    const chaos = (async () => {
      while (Date.now() < end) {
        if (killAt.length > 0 && Date.now() >= killAt[0]) {
          killAt.shift();
          await current.kill();
          current = await ServiceProcess.start({ rpcUrl: proxy.url, env });
          console.log(`  killed and restarted at ${((Date.now() - started) / 1000).toFixed(0)} s`);
        }
        if (!reorged && Date.now() >= reorgAt) {
          reorged = true;
          const snapshot = await chain.snapshot();
          await sleep(3_200); // about 3 blocks of mints
          await chain.revert(snapshot);
          await chain.mine(4);
          console.log(
            `  reorg at ${((Date.now() - started) / 1000).toFixed(0)} s: 3 blocks of mints reverted, 4 empty mined`,
          );
        }
        await sleep(200);
      }
    })();
    await Promise.all([...loops, chaos]);
    await Promise.all(inFlight);
    service = current;
    proxy.clearRules();

    // Every key replays 200 within 2 minutes.
    const api = new ApiClient(service.url);
    const deadline = Date.now() + 120_000;
    let waiting = keys;
    let replays = 0;
    const operationIds: string[] = [];
    while (waiting.length > 0) {
      if (Date.now() > deadline)
        throw new Error(`${waiting.length} keys still not 200 after 2 min (${waiting[0].key})`);
      const answers = await Promise.all(
        waiting.map(({ sender, key }) =>
          api.post("/nft/mint", sender.body, { ...sender.headers, "Idempotency-Key": key }),
        ),
      );
      replays += answers.length;
      answers.forEach((a) => {
        if (a.status === 200) operationIds.push(a.body.operationId as string);
      });
      waiting = waiting.filter((_, i) => answers[i].status !== 200);
      if (waiting.length > 0) await sleep(1_000);
    }
    // Nonce fills of the wallets, if any, finish on their own: wait for them, 30 s at most.
    let unfinished = Infinity;
    for (const until = Date.now() + 30_000; unfinished > 0 && Date.now() < until; await sleep(500)) {
      unfinished = 0;
      for (const w of wallets) {
        const view = await api.request("GET", `/wallets/${w}`, { headers: ROOT });
        unfinished += Number(view.body.unfinishedOperations);
      }
    }
    let undone = 0;
    const lost: string[] = [];
    for (const id of operationIds) {
      const op = (await api.get(`/nft/operations/${id}`)).body;
      if (Number(op.reorgs) > 0) undone++;
      // Confirmed: its transaction must be mined, at the block it names.
      const receipt = await provider.getTransactionReceipt(op.transactionHash as string);
      if (!receipt || receipt.status !== 1 || receipt.blockNumber !== op.blockNumber) lost.push(JSON.stringify(op));
    }
    for (const op of lost) console.log(`  confirmed, but not so on chain: ${op}`);
    // Two operations answered by one transaction: one token for two keys.
    const byHash = new Map<string, number>();
    for (const id of operationIds) {
      const hash = (await api.get(`/nft/operations/${id}`)).body.transactionHash as string;
      byHash.set(hash, (byHash.get(hash) ?? 0) + 1);
    }
    const shared = [...byHash].filter(([, n]) => n > 1);
    for (const [hash, n] of shared) console.log(`  ${n} operations answered by one transaction: ${hash}`);
    if (shared.length > 0) lost.push(...shared.map(([hash]) => hash));
    // The store's own count of the same (issue 51): operations sharing a transaction hash or a mined nonce.
    const metrics = await api.request("GET", "/metrics", { headers: ROOT });
    const sharing = Number(/^operations_sharing_transaction (\d+)$/m.exec(metrics.text)?.[1] ?? NaN);
    console.log(`  operations_sharing_transaction on /metrics: ${sharing} (must be 0)`);
    if (sharing !== 0) lost.push(`operations_sharing_transaction ${sharing}`);
    const minted = ((await nft.totalSupply()) as bigint) - supplyBefore;
    console.log(
      `  keys ${keys.length}, supply +${minted}, replays ${replays}, operations undone by the reorg and mined again ${undone}`,
    );
    console.log(`  wallets' unfinished operations: ${unfinished}; JSON-RPC calls through the proxy: ${proxy.total()}`);
    console.log(
      `  RSS of the service at the end: ${processRssMb(service.pid)} MB (PGlite; bench:memory's goal: <= 800 MB)`,
    );
    const ok = minted === BigInt(keys.length) && unfinished === 0 && lost.length === 0;
    console.log(`${ok ? "PASS" : "FAIL"}: supply grew by exactly the number of keys, and nothing is left unfinished`);
    process.exitCode = ok ? 0 : 1;
  } finally {
    await service?.stop().catch(() => {});
    provider.destroy();
    await proxy.close();
    await node.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
