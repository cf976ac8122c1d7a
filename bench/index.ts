/**
 * The collections index, on a separate `hardhat node`, in one run:
 *  (a) POST /nft/total-supply p50 for a holder of a collection of 1,000 tokens and for one of a
 *      collection of 100,000 (each holder's token the last one minted), called in turn, and the
 *      direct eth_call walletOfOwner beside each; then at 100,000 with the index held back
 *      (eth_getLogs refused at the proxy), when the wallet is read from the chain in pieces;
 *  (b) a backfill of the 100,000 Transfer logs by a fresh service (PGlite, then PostgreSQL)
 *      against a bare eth_getLogs sweep over the same blocks (5,000 logs a call, nothing written);
 *  (c) live indexing with 1 s blocks of 200 mints each: the lag of the index behind the head, in blocks;
 *  (d) ERC-1155 editions (NFTEditions): an edition contract with 1,000 transfers and one with
 *      100,000 (airdrops of 250 TransferSingle a block over 10 editions, and a TransferBatch of
 *      all 10 ids), indexed by one service; the index's reads of each (an edition's holders, its
 *      token view, a holder's wallet with amounts, the collection with its editions) in turn, p50 at
 *      100,000 against p50 at 1,000.
 * Run: npm run bench:index   (BENCH_READS, BENCH_LIVE_SECONDS change the load; BENCH_SMOKE=1: tiny sizes)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { readFileSync } from "node:fs";
import { Contract, ContractFactory, Transaction, Wallet, ZeroAddress, toBeHex, toQuantity, zeroPadValue } from "ethers";
import { collectionInterface } from "../server/chain/collection";
import { TRANSFER_TOPIC } from "../server/collections/log-ranges";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  TEST_API_KEY,
  collectionAt,
  deployDirectly,
  directProvider,
  fundedWallet,
  sleep,
} from "../test/api/harness";
import { RpcProxy } from "../test/support/rpc-proxy";
import { startPostgresServer } from "../test/users/postgres-server";
import { indexChecks, verdict } from "./checks";
import { envSized, sized } from "./smoke";

const READS = envSized("BENCH_READS", 200, 5);
const LIVE_SECONDS = envSized("BENCH_LIVE_SECONDS", 20, 2);
const SMALL = sized(1_000, 100);
const LARGE = sized(100_000, 2_000);
const BATCH = sized(1_000, 500);
const MINTS_PER_BLOCK = sized(200, 20);
const EDITION_SMALL = sized(1_000, 50);
const EDITION_LARGE = sized(100_000, 500);
const EDITIONS = 10;
const AIRDROP = sized(250, 25);
const AUTH = { Authorization: `Bearer ${TEST_API_KEY}` };
// Targets (INDEX_TARGETS in ./checks): p50 at 100,000 within 1.2x of p50 at 1,000; backfill >= 0.5x
// the sweep's rate; live lag <= 1 block.

interface Percentiles {
  p50: number;
  p99: number;
}

function percentiles(ms: number[]): Percentiles {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p99: at(0.99) };
}

/** Calls before the timed ones: JIT and caches warm (smoke mode: the path once or twice). */
const WARM_UP = sized(10, 2);

async function timed(times: number, call: () => Promise<void>): Promise<Percentiles> {
  for (let i = 0; i < WARM_UP; i++) await call(); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await call();
    ms.push(performance.now() - started);
  }
  return percentiles(ms);
}

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const json = (await res.json()) as { result?: T; error?: { message: string } };
  if (json.error) throw new Error(`${method}: ${json.error.message}`);
  return json.result as T;
}

async function indexedTo(api: ApiClient, address: string, block: number, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api.request("GET", `/collections/${address}`, { headers: AUTH });
    if (res.status === 200 && res.body.indexedBlock !== null && res.body.indexedBlock >= block) return;
    if (Date.now() > deadline) throw new Error(`index of ${address} not at ${block}: ${res.text}`);
    await sleep(100);
  }
}

async function main(): Promise<void> {
  const node = await ChainNode.start();
  const provider = directProvider(node.rpcUrl);
  const owner = new Wallet(DEV_KEYS[0], provider);
  const address = await deployDirectly(owner, { maxSupply: 1_000_000n, maxMintAmountPerTx: BigInt(BATCH) });
  const deployBlock = await provider.getBlockNumber();
  const nft = collectionAt(address, owner);
  const filler = Wallet.createRandom().address;
  const [small, large] = [await fundedWallet(provider), await fundedWallet(provider)];
  const proxy = await RpcProxy.start(node.rpcUrl);
  const dirs: string[] = [];
  const dataDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), "bench-index-"));
    dirs.push(dir);
    return dir;
  };
  const rows: Record<string, Record<string, string | number>> = {};
  // What the checks are made of (indexChecks), filled in as the bench goes.
  const figures: Parameters<typeof indexChecks>[0] = { readRatio: NaN, backfill: [], editionsReadRatio: NaN };

  try {
    // (a) total-supply at 1,000 and at 100,000, same service, same run: two collections, the
    // holder's token the last minted in each, read in turn (so the machine's load weighs on both alike).
    const smallAddress = await deployDirectly(owner, { maxSupply: 1_000_000n, maxMintAmountPerTx: BigInt(BATCH) });
    const smallNft = collectionAt(smallAddress, owner);
    await (await smallNft.mintForFree(SMALL - 1, filler)).wait();
    await (await smallNft.mintForFree(1, small.address)).wait();
    for (let minted = 0; minted < LARGE - BATCH; minted += BATCH) await (await nft.mintForFree(BATCH, filler)).wait();
    await (await nft.mintForFree(BATCH - 1, filler)).wait();
    await (await nft.mintForFree(1, large.address)).wait();
    let service = await ServiceProcess.start({ rpcUrl: proxy.url, env: { DATA_DIR: dataDir(), LOG_LEVEL: "warn" } });
    let api = new ApiClient(service.url);
    const totalSupply = (key: string, at: string) => async () => {
      const res = await api.post("/nft/total-supply", { privateKey: key, contractAddress: at });
      if (res.status !== 200) throw new Error(`total-supply answered ${res.status}: ${res.text}`);
    };
    const walletOfOwner = (holder: string, at: string) => async () => {
      await rpc(node.rpcUrl, "eth_call", [
        { to: at, data: collectionInterface().encodeFunctionData("walletOfOwner", [holder]) },
        "latest",
      ]);
    };
    await totalSupply(small.privateKey, smallAddress)(); // registers the collections (backfilled from their start)
    await totalSupply(large.privateKey, address)();
    await indexedTo(api, smallAddress, await provider.getBlockNumber());
    await indexedTo(api, address, await provider.getBlockNumber());
    const [atSmall, atLarge] = await inTurn(
      READS,
      totalSupply(small.privateKey, smallAddress),
      totalSupply(large.privateKey, address),
    );
    rows["total-supply, supply 1,000"] = format(atSmall);
    rows["total-supply, supply 100,000"] = format(atLarge);
    rows["direct walletOfOwner, supply 1,000"] = format(await timed(READS, walletOfOwner(small.address, smallAddress)));
    try {
      rows["direct walletOfOwner, supply 100,000"] = format(
        await timed(sized(20, 3), walletOfOwner(large.address, address)),
      );
    } catch (err) {
      rows["direct walletOfOwner, supply 100,000"] = { note: (err as Error).message.slice(0, 60) };
    }
    proxy.refuse("eth_getLogs", { times: Infinity });
    await (await nft.mintForFree(1, filler)).wait(); // the index cannot reach this head now
    try {
      rows["total-supply, 100,000, index held back (chain pieces)"] = format(
        await timed(sized(10, 3), totalSupply(large.privateKey, address)),
      );
    } catch (err) {
      rows["total-supply, 100,000, index held back (chain pieces)"] = { note: (err as Error).message.slice(0, 80) };
      figures.heldBackError = (err as Error).message;
      console.error(
        service
          .output()
          .split("\n")
          .filter((line) => /"level":[456]0/.test(line))
          .slice(0, 5)
          .join("\n"),
      );
    }
    proxy.clearRules();
    figures.readRatio =
      Number(rows["total-supply, supply 100,000"]["p50 ms"]) / Number(rows["total-supply, supply 1,000"]["p50 ms"]);
    await service.stop();

    // (b) backfill of the 100,000 Transfer logs against a bare eth_getLogs sweep run just before it
    // (the machine's load changes over minutes: each backfill is compared with its own sweep).
    const last = await provider.getBlockNumber();
    const pg = await startPostgresServer();
    try {
      for (const [name, env] of [
        ["PGlite", { DATA_DIR: dataDir() }],
        ["PostgreSQL", { DATABASE_URL: await pg.createDatabase() }],
      ] as const) {
        service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: { ...env, LOG_LEVEL: "warn" } });
        api = new ApiClient(service.url);
        const logs = await sweep(node.rpcUrl, address, deployBlock, last);
        rows[`bare eth_getLogs sweep, before ${name}`] = {
          logs: logs.count,
          seconds: logs.seconds.toFixed(2),
          "logs/s": Math.round(logs.count / logs.seconds),
        };
        const started = performance.now();
        const res = await api.post("/collections", { address, fromBlock: deployBlock }, AUTH);
        if (res.status !== 201) throw new Error(`POST /collections: ${res.text}`);
        await indexedTo(api, address, last);
        const seconds = (performance.now() - started) / 1000;
        const rate = logs.count / seconds;
        rows[`backfill, ${name}`] = { logs: logs.count, seconds: seconds.toFixed(2), "logs/s": Math.round(rate) };
        figures.backfill.push({ name, ratio: rate / (logs.count / logs.seconds) });
        if (name === "PostgreSQL") {
          // (c) live: 1 s blocks of 200 mints, the lag of this service's index behind the head.
          const lag = await liveLag(node.rpcUrl, api, address, owner);
          rows["live, 1 s blocks x 200 mints"] = {
            blocks: lag.blocks,
            "max lag (blocks)": lag.max,
            "p95 lag (blocks)": lag.p95,
          };
          figures.lag = lag;
        }
        await service.stop();
      }
    } finally {
      await pg.stop();
    }

    // (d) ERC-1155: the index's reads of an edition contract at 1,000 transfers and at 100,000.
    const editions = await editionReads(node.rpcUrl, owner, dataDir());
    for (const [name, pair] of Object.entries(editions)) {
      rows[`editions: ${name}, 1,000 transfers`] = format(pair[0]);
      rows[`editions: ${name}, 100,000 transfers`] = format(pair[1]);
    }
    figures.editionsReadRatio = Math.max(...Object.values(editions).map(([a, b]) => b.p50 / a.p50));
  } finally {
    console.table(rows);
    // A figure the bench did not reach (it threw) fails its check: NaN meets no target.
    process.exitCode = verdict(indexChecks(figures));
    provider.destroy();
    await proxy.close();
    await node.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** `a` and `b` called in turn, `times` each, after a warm-up: each one's percentiles. */
async function inTurn(
  times: number,
  a: () => Promise<void>,
  b: () => Promise<void>,
): Promise<[Percentiles, Percentiles]> {
  for (let i = 0; i < WARM_UP; i++) {
    await a(); // warm-up
    await b();
  }
  const ms: [number[], number[]] = [[], []];
  for (let i = 0; i < times; i++) {
    for (const [k, call] of [a, b].entries()) {
      const started = performance.now();
      await call();
      ms[k].push(performance.now() - started);
    }
  }
  return [percentiles(ms[0]), percentiles(ms[1])];
}

function format(p: Percentiles): Record<string, string> {
  return { "p50 ms": p.p50.toFixed(1), "p99 ms": p.p99.toFixed(1) };
}

/** Deploys contracts/NFTEditions.sol with EDITIONS open editions, and fills it with `transfers` moves. */
async function editionContract(owner: Wallet, holder: Wallet, transfers: number, firstRecipient: number) {
  const artifact = JSON.parse(
    readFileSync(path.join(__dirname, "..", "artifacts/contracts/NFTEditions.sol/NFTEditions.json"), "utf8"),
  ) as { abi: []; bytecode: string };
  const deployed = await new ContractFactory(artifact.abi, artifact.bytecode, owner).deploy(
    "Bench editions",
    "BE",
    "ipfs://bench/",
    owner.address,
    0n,
    ZeroAddress,
  );
  await deployed.waitForDeployment();
  const editions = deployed as Contract;
  const fromBlock = (await deployed.deploymentTransaction()!.wait())!.blockNumber;
  for (let i = 0; i < EDITIONS; i++) await (await editions.createEdition(0n, 0n, 1_000n)).wait();
  const ids = Array.from({ length: EDITIONS }, (_, i) => BigInt(i + 1));
  // The holder whose wallet is read: some of every edition, then a TransferBatch of all the ids.
  for (const id of ids) await (await editions.mintForFree(id, 5n, holder.address)).wait();
  const asHolder = editions.connect(holder) as Contract;
  await (
    await asHolder.safeBatchTransferFrom(
      holder.address,
      owner.address,
      ids,
      ids.map(() => 1n),
      "0x",
    )
  ).wait();
  // The rest: airdrops of AIRDROP new holders a transaction (one TransferSingle each), editions in turn.
  let next = firstRecipient;
  for (let sent = EDITIONS + 1; sent < transfers; sent += AIRDROP) {
    const count = Math.min(AIRDROP, transfers - sent);
    const recipients = Array.from({ length: count }, () => zeroPadValue(toBeHex(next++), 20));
    const id = ids[Math.floor(sent / AIRDROP) % EDITIONS];
    await (
      await editions.airdrop(
        id,
        recipients,
        recipients.map((_, i) => BigInt(1 + (i % 3))),
      )
    ).wait();
  }
  return { address: await editions.getAddress(), fromBlock };
}

/**
 * (d): two edition contracts (EDITION_SMALL and EDITION_LARGE transfers), one service indexing
 * both; each read of the index called on each in turn: its p50 at either size.
 */
async function editionReads(
  url: string,
  owner: Wallet,
  dataDir: string,
): Promise<Record<string, [Percentiles, Percentiles]>> {
  const provider = directProvider(url);
  const payer = owner.connect(provider);
  const holder = (await fundedWallet(provider)).connect(provider);
  try {
    const small = await editionContract(payer, holder, EDITION_SMALL, 1_000_000);
    const large = await editionContract(payer, holder, EDITION_LARGE, 2_000_000);
    const service = await ServiceProcess.start({ rpcUrl: url, env: { DATA_DIR: dataDir, LOG_LEVEL: "warn" } });
    try {
      const api = new ApiClient(service.url);
      const head = await provider.getBlockNumber();
      for (const c of [small, large]) {
        const res = await api.post("/collections", { address: c.address, fromBlock: c.fromBlock }, AUTH);
        if (res.status !== 201) throw new Error(`POST /collections: ${res.text}`);
      }
      for (const c of [small, large]) await indexedTo(api, c.address, head);
      const read = (path: (at: string) => string, at: string) => async () => {
        const res = await api.request("GET", path(at), { headers: AUTH });
        if (res.status !== 200) throw new Error(`GET ${path(at)} answered ${res.status}: ${res.text}`);
      };
      const reads: Record<string, (at: string) => string> = {
        "holders of an edition": (at) => `/collections/${at}/owners?tokenId=1&limit=10`,
        "an edition (token view)": (at) => `/collections/${at}/tokens/1?limit=10`,
        "a holder's wallet": (at) => `/collections/${at}/wallets/${holder.address}`,
        "the collection and its editions": (at) => `/collections/${at}`,
        "holders of every edition": (at) => `/collections/${at}/owners?limit=10`,
      };
      const out: Record<string, [Percentiles, Percentiles]> = {};
      for (const [name, path] of Object.entries(reads))
        out[name] = await inTurn(READS, read(path, small.address), read(path, large.address));
      return out;
    } finally {
      await service.stop();
    }
  } finally {
    provider.destroy();
  }
}

/** eth_getLogs over `from`..`to` in ranges of about 5,000 logs, parsed and dropped. */
async function sweep(
  url: string,
  address: string,
  from: number,
  to: number,
): Promise<{ count: number; seconds: number }> {
  const started = performance.now();
  let count = 0;
  let span = 1;
  for (let start = from; start <= to;) {
    const end = Math.min(to, start + span - 1);
    const logs = await rpc<unknown[]>(url, "eth_getLogs", [
      { address, topics: [TRANSFER_TOPIC], fromBlock: toQuantity(start), toBlock: toQuantity(end) },
    ]);
    count += logs.length;
    span = logs.length > 0 ? Math.max(1, Math.floor((span * 5_000) / logs.length)) : span * 4;
    start = end + 1;
  }
  return { count, seconds: (performance.now() - started) / 1000 };
}

/**
 * Mines a block a second with 200 mintForFree(1) each (pre-signed, sent in one batch per block)
 * for LIVE_SECONDS, sampling the head and the index every 100 ms.
 */
async function liveLag(
  url: string,
  api: ApiClient,
  address: string,
  owner: Wallet,
): Promise<{ blocks: number; max: number; p95: number }> {
  await rpc(url, "evm_setAutomine", [false]);
  await rpc(url, "evm_setIntervalMining", [1_000]);
  const chainId = 31337n;
  let nonce = Number(await rpc<string>(url, "eth_getTransactionCount", [owner.address, "pending"]));
  const data = collectionInterface().encodeFunctionData("mintForFree", [1, owner.address]);
  const fees = { maxFeePerGas: 50_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
  const firstHead = Number(await rpc<string>(url, "eth_blockNumber", []));
  const lags: number[] = [];
  let sending = true;
  const sender = (async () => {
    while (sending) {
      const raws = await Promise.all(
        Array.from({ length: MINTS_PER_BLOCK }, () =>
          owner.signTransaction(
            Transaction.from({ to: address, data, nonce: nonce++, gasLimit: 120_000n, chainId, type: 2, ...fees }),
          ),
        ),
      );
      await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(
          raws.map((raw, id) => ({ jsonrpc: "2.0", id, method: "eth_sendRawTransaction", params: [raw] })),
        ),
      });
      await sleep(1_000);
    }
  })();
  const until = Date.now() + LIVE_SECONDS * 1000;
  while (Date.now() < until) {
    const [head, view] = await Promise.all([
      rpc<string>(url, "eth_blockNumber", []).then(Number),
      api.request("GET", `/collections/${address}`, { headers: AUTH }),
    ]);
    lags.push(Math.max(0, head - (view.body.indexedBlock as number)));
    await sleep(100);
  }
  sending = false;
  await sender;
  const lastHead = Number(await rpc<string>(url, "eth_blockNumber", []));
  await rpc(url, "evm_setIntervalMining", [0]);
  await rpc(url, "evm_setAutomine", [true]);
  const sorted = [...lags].sort((a, b) => a - b);
  return {
    blocks: lastHead - firstHead,
    max: sorted[sorted.length - 1],
    p95: sorted[Math.floor(0.95 * (sorted.length - 1))],
  };
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
