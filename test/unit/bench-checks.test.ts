/**
 * Every bench exits with verdict()'s code over its checks (bench/checks.ts): a failing figure must
 * make it 1, whichever bench it comes from. The check functions are fed figures here; no bench runs.
 */
import { expect } from "chai";
import {
  accessChecks,
  apiChecks,
  blocktimeBurstChecks,
  checkoutGasChecks,
  editionsGasChecks,
  failoverChecks,
  gasChecks,
  indexChecks,
  jobsChecks,
  metadataChecks,
  verdict,
  walletsChecks,
  webhooksBurstChecks,
  webhooksCostChecks,
  type Check,
} from "../../bench/checks";

/** The exit code a bench would set, and what it printed. */
function exitCodeOf(checks: Check[]): { code: number; lines: string[] } {
  const lines: string[] = [];
  return { code: verdict(checks, (line) => lines.push(line)), lines };
}

const read = (ratio: number, errors = 0) => ({ name: "tokenURI, 16 connections", ratio, errors });
const mint = (ratio: number, errors = 0) => ({ name: "separate node", ratio, errors });
const burst = {
  rawMs: 4_000,
  serviceMs: 4_000,
  serviceBlocks: 2,
  serviceErrors: 0,
  notConfirmed: 0,
  rawErrors: 0,
};
/** bench/failover.ts's figures: every target met, but for `changes`. */
const failover = (changes: Partial<Parameters<typeof failoverChecks>[0]>) =>
  failoverChecks({ readRatio: 1, readErrors: 0, perChain: { mint: 4.04 }, baseline: { mint: 4.04 }, ...changes });
const index = {
  readRatio: 1,
  backfill: [{ name: "PGlite", ratio: 1 }],
  lag: { max: 1, blocks: 20 },
};

/** Per bench: figures that meet every target, and failing variants of them, each named. */
const benches: Array<{ bench: string; passing: Check[]; failing: Record<string, Check[]> }> = [
  {
    // bench/gas.ts checks the ERC-721 side, the editions side and checkout (token-priced mints) in one verdict.
    bench: "gas",
    passing: [
      ...gasChecks({ vsErc721a: 1, vsEnumerable: 0.3 }),
      ...editionsGasChecks({ mint: 1.05, airdrop: 1 }),
      ...checkoutGasChecks({ collection: 1.1, editions: 0.9 }),
    ],
    failing: {
      "ours over ERC721A": gasChecks({ vsErc721a: 1.2, vsEnumerable: 0.3 }),
      "ours over Enumerable": gasChecks({ vsErc721a: 1, vsEnumerable: 0.5 }),
      "an edition's mint over ERC1155Supply's": editionsGasChecks({ mint: 1.06, airdrop: 1 }),
      "an edition's airdrop over ERC1155Supply's": editionsGasChecks({ mint: 1, airdrop: 1.06 }),
      "an edition's mint not measured": editionsGasChecks({ mint: NaN, airdrop: 1 }),
      "a token-priced mint over native + transferFrom": checkoutGasChecks({ collection: 1.11, editions: 0.9 }),
      "a token-priced edition mint over native + transferFrom": checkoutGasChecks({ collection: 0.9, editions: 1.11 }),
      "a token-priced mint not measured": checkoutGasChecks({ collection: NaN, editions: 0.9 }),
    },
  },
  {
    bench: "api",
    passing: apiChecks({ reads: [read(1), read(0.9)], mints: [mint(1), mint(1.1)] }),
    failing: {
      "one slow read": apiChecks({ reads: [read(1), read(0.79)], mints: [mint(1)] }),
      "a read error": apiChecks({ reads: [read(1, 1)], mints: [mint(1)] }),
      "slow mints on one shape": apiChecks({ reads: [read(1)], mints: [mint(1.2), mint(0.99)] }),
      "a mint error": apiChecks({ reads: [read(1)], mints: [mint(1, 1)] }),
    },
  },
  {
    bench: "access",
    passing: accessChecks({ addedMs: 0.4, errors: 0 }),
    failing: {
      "0.6 ms added": accessChecks({ addedMs: 0.6, errors: 0 }),
      "an error": accessChecks({ addedMs: 0.1, errors: 1 }),
    },
  },
  {
    bench: "wallets",
    passing: walletsChecks({ localRatio: 1, errors: 0 }),
    failing: {
      "slow local wallet": walletsChecks({ localRatio: 0.9, errors: 0 }),
      "an error": walletsChecks({ localRatio: 1, errors: 1 }),
    },
  },
  {
    bench: "index",
    passing: indexChecks(index),
    failing: {
      "slow reads at 100,000": indexChecks({ ...index, readRatio: 1.3 }),
      "reads not measured": indexChecks({ ...index, readRatio: NaN }),
      "held-back reads failed": indexChecks({ ...index, heldBackError: "502" }),
      "slow backfill": indexChecks({ ...index, backfill: [{ name: "PostgreSQL", ratio: 0.4 }] }),
      "no backfill": indexChecks({ ...index, backfill: [] }),
      "lag of 2 blocks": indexChecks({ ...index, lag: { max: 2, blocks: 20 } }),
      "no lag measured": indexChecks({ ...index, lag: undefined }),
    },
  },
  {
    bench: "blocktime",
    passing: blocktimeBurstChecks("PGlite burst 1", burst),
    failing: {
      "slow service": blocktimeBurstChecks("PGlite burst 1", { ...burst, serviceMs: 6_000 }),
      "3 blocks": blocktimeBurstChecks("PGlite burst 1", { ...burst, serviceBlocks: 3 }),
      "a service error": blocktimeBurstChecks("PGlite burst 1", { ...burst, serviceErrors: 1 }),
      "a 202": blocktimeBurstChecks("PGlite burst 1", { ...burst, notConfirmed: 1 }),
      "a raw error": blocktimeBurstChecks("PGlite burst 1", { ...burst, rawErrors: 1 }),
    },
  },
  {
    bench: "webhooks",
    passing: [
      ...webhooksBurstChecks({ name: "PGlite", p99: 900 }),
      ...webhooksCostChecks({ name: "PGlite", ratio: 0.95 }),
    ],
    failing: {
      "p99 of 1.1 s": webhooksBurstChecks({ name: "PGlite", p99: 1_100 }),
      "cost to writes": [
        ...webhooksBurstChecks({ name: "PGlite", p99: 900 }),
        ...webhooksCostChecks({ name: "PGlite", ratio: 0.74 }),
      ],
    },
  },
  {
    bench: "jobs",
    passing: jobsChecks({ ratio: 0.9, gasRatio: 0.6, csvMs: 1_500 }),
    failing: {
      "a job at 0.7x the raw script": jobsChecks({ ratio: 0.7, gasRatio: 0.6, csvMs: 1_500 }),
      "no ratio measured": jobsChecks({ ratio: NaN, gasRatio: 0.6, csvMs: 1_500 }),
    },
  },
  {
    bench: "failover",
    passing: failover({ readRatio: 0.95 }),
    failing: {
      "reads at 0.8x with the first URL hung": failover({ readRatio: 0.8 }),
      "a read answered an error": failover({ readErrors: 1 }),
      "one more call per mint": failover({ perChain: { mint: 5.04 } }),
      "calls per chain not measured": failover({ perChain: {} }),
    },
  },
];

describe("bench checks (bench/checks.ts): a failing figure makes the bench exit 1", function () {
  for (const { bench, passing, failing } of benches) {
    describe(`bench/${bench}.ts`, function () {
      it("exits 0 when every figure meets its target, printing PASS for each", function () {
        const { code, lines } = exitCodeOf(passing);
        expect(code, lines.join("\n")).to.equal(0);
        expect(lines).to.have.length(passing.length);
        for (const line of lines) expect(line).to.match(/^PASS: /);
      });
      for (const [name, checks] of Object.entries(failing)) {
        it(`exits 1 on ${name}, printing FAIL`, function () {
          const { code, lines } = exitCodeOf(checks);
          expect(code).to.equal(1);
          expect(
            lines.some((line) => line.startsWith("FAIL: ")),
            lines.join("\n"),
          ).to.equal(true);
        });
      }
    });
  }

  it("exits 1 when a bench made no check at all", function () {
    expect(exitCodeOf([]).code).to.equal(1);
  });
});

describe("bench/metadata.ts's checks", function () {
  const good = {
    tokenUriSeparate: 3,
    tokenUriEmbedded: 2,
    repeatCalls: 0,
    serve: 1,
    serveP99Ms: 10,
    putMs: 1_000,
    carMs: 2_000,
    carRssMb: 10,
    errors: 0,
  };
  it("passes figures on target, and fails each one off target", function () {
    expect(exitCodeOf(metadataChecks(good)).code).to.equal(0);
    const bad = {
      tokenUriSeparate: 1.2,
      tokenUriEmbedded: 1.2,
      repeatCalls: 1,
      serve: 0.5,
      serveP99Ms: 80,
      putMs: 6_000,
      carMs: 11_000,
      carRssMb: 150,
      errors: 1,
    };
    for (const [field, value] of Object.entries(bad))
      expect(exitCodeOf(metadataChecks({ ...good, [field]: value })).code, field).to.equal(1);
  });
});
