/**
 * The benches' checks, as pure functions of the figures a bench measured: each bench hands its
 * figures to its function here, prints the checks with `verdict` and exits with the code it gives,
 * and test/unit/bench-checks.test.ts feeds each function a failing figure without running a bench.
 */
import { SMOKE } from "./smoke";
import { median } from "./median";

/** One figure against its target. */
export interface Check {
  ok: boolean;
  text: string;
}

const check = (ok: boolean, text: string): Check => ({ ok, text });
const x = (ratio: number, digits = 2) => `${ratio.toFixed(digits)}x`;

/**
 * Prints each check as PASS or FAIL; the exit code: 1 when any failed, or when there is none. In
 * smoke mode (./smoke) a figure off its target is let through; one not measured (NaN) still fails.
 */
export function verdict(
  checks: readonly Check[],
  print: (line: string) => void = console.log,
  smoke: boolean = SMOKE,
): 0 | 1 {
  for (const { ok, text } of checks) print(`${ok ? "PASS" : "FAIL"}: ${text}`);
  if (checks.length === 0) return 1;
  if (smoke) {
    // A figure the bench did not reach (NaN, or "not measured") still fails: that part did not run.
    const unreached = checks.filter((c) => !c.ok && /\bNaN\b|not measured/.test(c.text));
    print("(smoke mode: figures not checked, only that each was measured)");
    return unreached.length === 0 ? 0 : 1;
  }
  return checks.every((c) => c.ok) ? 0 : 1;
}

/** bench/gas.ts: our mint(5)'s gas as a share of ERC721A's and of ERC721Enumerable's. */
export const GAS_TARGETS = { vsErc721a: 1.1, vsEnumerable: 0.35 };
export function gasChecks(f: { vsErc721a: number; vsEnumerable: number }): Check[] {
  return [
    check(
      f.vsErc721a <= GAS_TARGETS.vsErc721a,
      `ours mint(5) = ${x(f.vsErc721a, 3)} ERC721A mint(5) (target <= ${GAS_TARGETS.vsErc721a}x)`,
    ),
    check(
      f.vsEnumerable <= GAS_TARGETS.vsEnumerable,
      `ours mint(5) = ${x(f.vsEnumerable, 3)} Enumerable mint(5) (target <= ${GAS_TARGETS.vsEnumerable}x)`,
    ),
  ];
}

/** bench/gas.ts (editions): NFTEditions' mint(id, 5) and airdrop per recipient as a share of a bare ERC1155Supply's. */
export const EDITIONS_GAS_TARGETS = { vsErc1155Supply: 1.05 };
export function editionsGasChecks(f: { mint: number; airdrop: number }): Check[] {
  const target = EDITIONS_GAS_TARGETS.vsErc1155Supply;
  return [
    check(
      f.mint <= target,
      `NFTEditions mint(id, 5) = ${x(f.mint, 3)} ERC1155Supply mint(id, 5) (target <= ${target}x)`,
    ),
    check(
      f.airdrop <= target,
      `NFTEditions airdrop per recipient = ${x(f.airdrop, 3)} ERC1155Supply's (target <= ${target}x)`,
    ),
  ];
}

/**
 * bench/gas.ts (checkout): a token-priced mint(5)'s gas as a share of a native-priced mint(5) plus one bare
 * ERC-20 transferFrom of the price, measured side by side; NFTCollection and an edition of NFTEditions.
 */
export const CHECKOUT_GAS_TARGET = 1.1;
export function checkoutGasChecks(f: { collection: number; editions: number }): Check[] {
  const target = CHECKOUT_GAS_TARGET;
  return [
    check(
      f.collection <= target,
      `NFTCollection token mint(5) = ${x(f.collection, 3)} native mint(5) + a bare transferFrom (target <= ${target}x)`,
    ),
    check(
      f.editions <= target,
      `NFTEditions token mint(id, 5) = ${x(f.editions, 3)} native mint(id, 5) + a bare transferFrom (target <= ${target}x)`,
    ),
  ];
}

/** A measured rate against its baseline's, with the errors of the measured side. */
export interface Ratio {
  name: string;
  ratio: number;
  errors: number;
}

/** bench/api.ts: reads of rotating token ids, API/direct; mints, API/lean raw ethers. */
export const API_TARGETS = { read: 0.8, write: 1.0 };
export function apiChecks(f: { reads: Ratio[]; mints: Ratio[] }): Check[] {
  return [
    ...f.reads.map((r) =>
      check(
        r.ratio >= API_TARGETS.read && r.errors === 0,
        `${r.name} = ${x(r.ratio)}, ${r.errors} API errors (target >= ${API_TARGETS.read}x, 0 errors)`,
      ),
    ),
    ...f.mints.map((m) =>
      check(
        m.ratio >= API_TARGETS.write && m.errors === 0,
        `16 concurrent mints API/lean raw ethers, ${m.name} = ${x(m.ratio)}, ${m.errors} API errors (target >= ${API_TARGETS.write}x, 0 errors)`,
      ),
    ),
  ];
}

/** bench/access.ts: what an access key adds to a request's p50. */
export const ACCESS_TARGET_MS = 0.5;
export function accessChecks(f: { addedMs: number; errors: number }): Check[] {
  return [
    check(
      f.addedMs <= ACCESS_TARGET_MS && f.errors === 0,
      `the access key adds ${f.addedMs.toFixed(3)} ms at p50 (target <= ${ACCESS_TARGET_MS} ms), ${f.errors} errors (target 0)`,
    ),
  ];
}

/** bench/wallets.ts: mints through a local wallet against mints with privateKey. */
export const WALLETS_TARGET = 0.95;
export function walletsChecks(f: { localRatio: number; errors: number }): Check[] {
  return [
    check(
      f.localRatio >= WALLETS_TARGET && f.errors === 0,
      `mint through a local wallet / with privateKey = ${x(f.localRatio)} (target >= ${WALLETS_TARGET}x), ${f.errors} errors over every side (target 0)`,
    ),
  ];
}

/** bench/index.ts: total-supply at 100,000 vs 1,000; backfill vs a bare sweep; live lag. */
export const INDEX_TARGETS = { read: 1.2, backfill: 0.5, lagBlocks: 1 };
export function indexChecks(f: {
  /** p50 at 100,000 / p50 at 1,000. */
  readRatio: number;
  /** Why total-supply failed with the index held back, if it did. */
  heldBackError?: string;
  /** Per store: the backfill's rate / the sweep's. */
  backfill: Array<{ name: string; ratio: number }>;
  lag?: { max: number; blocks: number };
  /** ERC-1155: the largest of the index reads' p50 at 100,000 transfers / at 1,000. */
  editionsReadRatio?: number;
}): Check[] {
  const checks = [
    check(
      f.readRatio <= INDEX_TARGETS.read,
      `total-supply p50 at 100,000 / at 1,000 = ${x(f.readRatio)} (target <= ${INDEX_TARGETS.read}x)`,
    ),
  ];
  if (f.editionsReadRatio !== undefined)
    checks.push(
      check(
        f.editionsReadRatio <= INDEX_TARGETS.read,
        `editions: index reads p50 at 100,000 transfers / at 1,000, the largest = ${x(f.editionsReadRatio)} (target <= ${INDEX_TARGETS.read}x)`,
      ),
    );
  if (f.heldBackError !== undefined)
    checks.push(check(false, `total-supply with the index held back: ${f.heldBackError.slice(0, 200)}`));
  for (const b of f.backfill)
    checks.push(
      check(
        b.ratio >= INDEX_TARGETS.backfill,
        `backfill (${b.name}) = ${x(b.ratio)} the sweep's rate (target >= ${INDEX_TARGETS.backfill}x)`,
      ),
    );
  if (f.backfill.length === 0) checks.push(check(false, "backfill: not measured"));
  checks.push(
    f.lag
      ? check(
          f.lag.max <= INDEX_TARGETS.lagBlocks,
          `live lag max ${f.lag.max} blocks over ${f.lag.blocks} blocks (target <= ${INDEX_TARGETS.lagBlocks})`,
        )
      : check(false, "live lag: not measured"),
  );
  return checks;
}

/** bench/blocktime.ts: one pair of bursts, the service's against the raw client's. */
export const BLOCKTIME_TARGETS = { ratio: 0.8, maxBlocks: 2, alignedRatio: 0.95 };

/** bench/blocktime.ts: the median of the aligned rounds' raw / service ratios. */
export function blocktimeAlignedChecks(name: string, ratios: number[]): Check[] {
  const target = BLOCKTIME_TARGETS.alignedRatio;
  const rounds = ratios.map((r) => x(r)).join(", ");
  return [
    check(
      median(ratios) >= target,
      `${name}: median raw / service = ${x(median(ratios))} of ${rounds} (target >= ${target}x)`,
    ),
  ];
}

/** bench/rpc-cost.ts: JSON-RPC calls a mint (burst) and a setPaused, idle calls a minute with a subscription, block to answer p50. */
export const RPC_COST_TARGETS = { mint: 3.2, anvilMint: 2.2, setPaused: 3.5, idlePerMinute: 6, blockToAnswerMs: 150 };
export function blocktimeBurstChecks(
  name: string,
  f: {
    rawMs: number;
    serviceMs: number;
    serviceBlocks: number;
    serviceErrors: number;
    notConfirmed: number;
    rawErrors: number;
  },
): Check[] {
  const ratio = f.rawMs / f.serviceMs;
  const { ratio: target, maxBlocks } = BLOCKTIME_TARGETS;
  const checks = [
    check(ratio >= target, `${name}: raw / service = ${x(ratio)} (target >= ${target}x)`),
    check(f.serviceBlocks <= maxBlocks, `${name}: service spans ${f.serviceBlocks} blocks (target <= ${maxBlocks})`),
    check(
      f.serviceErrors + f.notConfirmed === 0,
      `${name}: service errors ${f.serviceErrors}, 202s ${f.notConfirmed} (target 0)`,
    ),
  ];
  if (f.rawErrors > 0) checks.push(check(false, `${name}: raw errors ${f.rawErrors}`));
  return checks;
}

/** bench/webhooks.ts (a): a burst's commit-to-delivery p99. */
export const WEBHOOKS_P99_GOAL_MS = 1_000;
export function webhooksBurstChecks(f: { name: string; p99: number }): Check[] {
  return [
    check(
      f.p99 <= WEBHOOKS_P99_GOAL_MS,
      `burst on ${f.name}: commit to delivery p99 ${f.p99} ms (goal p99 <= ${WEBHOOKS_P99_GOAL_MS} ms)`,
    ),
  ];
}

/** bench/webhooks.ts (b): mints/s with one endpoint (until its last delivery) / with none. */
/** Floors of the cost to writes with one endpoint, per store (issue 34: simplicity first on the embedded store). */
export const WEBHOOKS_COST_FLOORS: Record<string, number> = { PGlite: 0.75, PostgreSQL: 0.85 };
export function webhooksCostChecks(f: { name: string; ratio: number }): Check[] {
  const floor = WEBHOOKS_COST_FLOORS[f.name] ?? 0.85;
  return [
    check(
      f.ratio >= floor,
      `cost to writes (${f.name}): median of the paired ratios ${x(f.ratio, 3)}, the runs with an endpoint timed until their last delivery (floor >= ${floor}x)`,
    ),
  ];
}

/** bench/jobs.ts: a 10,000-recipient job's wall time against a raw script's, same batches (raw / job). */
export const JOBS_TARGETS = { ratio: 0.8 };
export function jobsChecks(f: { ratio: number; gasRatio: number; csvMs: number }): Check[] {
  return [
    check(
      f.ratio >= JOBS_TARGETS.ratio,
      `10,000-recipient job = ${x(f.ratio)} the raw script's speed (target >= ${JOBS_TARGETS.ratio}x); its gas ${x(f.gasRatio, 3)} of 10,000 mintForFree(1); a 100,000-row CSV checked in ${f.csvMs} ms (goal <= 2000 ms, reported)`,
    ),
  ];
}

/** bench/memory.ts: RSS of npm start on the embedded chain with PGlite, idle and after load (MB). */
export const MEMORY_TARGETS = { idleMb: 600, loadedMb: 800 };
export function memoryChecks(f: { embeddedPglite: { idle: number; loaded: number } }): Check[] {
  const { idle, loaded } = f.embeddedPglite;
  return [
    check(
      idle <= MEMORY_TARGETS.idleMb,
      `embedded chain + PGlite idle: ${idle} MB (target <= ${MEMORY_TARGETS.idleMb} MB)`,
    ),
    check(
      loaded <= MEMORY_TARGETS.loadedMb,
      `embedded chain + PGlite after load: ${loaded} MB (target <= ${MEMORY_TARGETS.loadedMb} MB)`,
    ),
  ];
}

/**
 * bench/failover.ts: reads with the first RPC URL hung (after its first timeout) / with it healthy;
 * JSON-RPC calls per operation per chain with two URLs against one URL's (today's), within a
 * background poll's worth.
 */
export const FAILOVER_TARGETS = { read: 0.9, callsSlack: 0.05 };
export function failoverChecks(f: {
  readRatio: number;
  readErrors: number;
  perChain: Record<string, number>;
  baseline: Record<string, number>;
}): Check[] {
  const checks = [
    check(
      f.readRatio >= FAILOVER_TARGETS.read && f.readErrors === 0,
      `reads with the first URL hung / healthy = ${x(f.readRatio)}, ${f.readErrors} errors (target >= ${FAILOVER_TARGETS.read}x, 0 errors)`,
    ),
  ];
  for (const [name, baseline] of Object.entries(f.baseline)) {
    const perChain = f.perChain[name];
    checks.push(
      check(
        perChain !== undefined && perChain <= baseline + FAILOVER_TARGETS.callsSlack,
        `${name} JSON-RPC calls/op per chain with two URLs: ${perChain?.toFixed(2) ?? "not measured"} (one URL: ${baseline.toFixed(2)}; target <= ${(baseline + FAILOVER_TARGETS.callsSlack).toFixed(2)})`,
      ),
    );
  }
  return checks;
}

/** bench/metadata.ts (issue 44): tokenURI vs eth_call, serving vs a static file server, the upload and the CAR. */
export const METADATA_TARGETS = {
  tokenUri: 1.5,
  serve: 0.8,
  serveP99Ms: 50,
  putMs: 5_000,
  carMs: 10_000,
  carRssMb: 100,
};
export interface MetadataFigures {
  tokenUriSeparate: number;
  tokenUriEmbedded: number;
  /** eth_calls counted at the proxy while every tokenURI read was a repeat. */
  repeatCalls: number;
  serve: number;
  serveP99Ms: number;
  putMs: number;
  carMs: number;
  carRssMb: number;
  errors: number;
}
export function metadataChecks(f: MetadataFigures): Check[] {
  const t = METADATA_TARGETS;
  return [
    check(
      f.tokenUriSeparate >= t.tokenUri,
      `tokenURI vs eth_call, separate node: ${x(f.tokenUriSeparate)} (≥ ${t.tokenUri}x)`,
    ),
    check(
      f.tokenUriEmbedded >= t.tokenUri,
      `tokenURI vs eth_call, embedded: ${x(f.tokenUriEmbedded)} (≥ ${t.tokenUri}x)`,
    ),
    check(f.repeatCalls === 0, `JSON-RPC calls of repeat tokenURI reads: ${f.repeatCalls} (0)`),
    check(f.serve >= t.serve, `serving vs a static file server: ${x(f.serve)} (≥ ${t.serve}x)`),
    check(f.serveP99Ms < t.serveP99Ms, `serving p99: ${f.serveP99Ms} ms (< ${t.serveP99Ms} ms)`),
    check(f.putMs < t.putMs, `PUT of the documents: ${f.putMs.toFixed(0)} ms (< ${t.putMs} ms)`),
    check(f.carMs < t.carMs, `CAR streamed: ${f.carMs.toFixed(0)} ms (< ${t.carMs} ms)`),
    check(f.carRssMb < t.carRssMb, `CAR RSS growth: ${f.carRssMb.toFixed(0)} MB (< ${t.carRssMb} MB)`),
    check(f.errors === 0, `errors and non-2xx answers under load: ${f.errors} (0)`),
  ];
}

/** bench/chains.ts: chain A's reads and writes with two chains configured vs with A alone. */
export const CHAINS_TARGETS = { ratio: 0.95 };
export function chainsChecks(f: { reads: Omit<Ratio, "name">; writes: Omit<Ratio, "name"> }): Check[] {
  return (["reads", "writes"] as const).map((kind) =>
    check(
      f[kind].ratio >= CHAINS_TARGETS.ratio && f[kind].errors === 0,
      `${kind === "reads" ? "tokenURI reads" : "mints"} on chain A, two chains configured / one = ${x(f[kind].ratio)}, ${f[kind].errors} errors (target >= ${CHAINS_TARGETS.ratio}x, 0 errors)`,
    ),
  );
}
