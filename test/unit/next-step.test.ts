import { expect } from "chai";
import type { Receipt } from "../../server/chain/receipt";
import { askNode, nextStep, type FollowedOperation, type Seen, type Step } from "../../server/engine/next-step";

const RULES = { confirmations: 1, resendBlocks: 3, resendMs: 10_000 };
const NOW = 1_000_000;
const HEAD = 100;

function receipt(blockNumber: number, blockHash = `0xb${blockNumber}`, status = 1): Receipt {
  return {
    blockNumber,
    blockHash,
    status,
    hash: "0xt",
    gasUsed: 21_000n,
    effectiveGasPrice: 1n,
    logs: [],
  } as unknown as Receipt;
}

/** An operation sent at nonce 5, its resend clock started at block 99, 1 s ago. */
const sent: FollowedOperation = {
  status: "sent",
  nonce: 5,
  blockNumber: null,
  blockHash: null,
  pendingSince: 99,
  pendingSinceAt: new Date(NOW - 1_000),
  final: false,
};
const confirmedAt = (n: number): FollowedOperation => ({
  ...sent,
  status: "confirmed",
  blockNumber: n,
  blockHash: `0xb${n}`,
});
const seen = (extra: Partial<Seen> = {}): Seen => ({ head: HEAD, finalHeight: HEAD - 64, now: NOW, ...extra });

/** API.md "Operations" and issues 31 and 38, one row per situation. */
const table: Array<[string, FollowedOperation, Seen, Step["kind"], Partial<Step>?]> = [
  ["a final operation is left alone", { ...confirmedAt(10), final: true }, seen(), "wait"],
  ["mined and CONFIRMATIONS deep: confirmed from its receipt", sent, seen({ receipt: receipt(HEAD) }), "settle"],
  [
    "mined but not yet deep enough (CONFIRMATIONS 3): its block is recorded",
    sent,
    seen({ receipt: receipt(HEAD) }),
    "recordBlock",
  ],
  [
    "its block already recorded and not yet deep enough (CONFIRMATIONS 3): waits",
    { ...sent, blockNumber: HEAD, blockHash: `0xb${HEAD}` },
    seen({ receipt: receipt(HEAD) }),
    "wait",
  ],
  [
    "recorded mined, its receipt gone and the chain proves the block changed: reorged",
    { ...sent, blockNumber: 98, blockHash: "0xb98" },
    seen({ mined: "reorged" }),
    "reorged",
  ],
  [
    "recorded mined, a receipt lookup failed: nothing proven, waits",
    { ...sent, blockNumber: 98, blockHash: "0xb98" },
    seen({ mined: "unknown" }),
    "wait",
  ],
  ["confirmed, its block still at its height and not final: waits", confirmedAt(90), seen({ mined: "mined" }), "wait"],
  ["confirmed, its block at or below the final height: final", confirmedAt(30), seen({ mined: "mined" }), "finalize"],
  ["confirmed, the same receipt, now final", confirmedAt(30), seen({ receipt: receipt(30) }), "finalize"],
  [
    "confirmed and answered, then a reorg removed its receipt: back to sent",
    confirmedAt(98),
    seen({ mined: "reorged" }),
    "reorged",
  ],
  [
    "confirmed and answered, then a reorg mined it again in another block: undone, answered again later",
    confirmedAt(98),
    seen({ receipt: receipt(99, "0xother") }),
    "reorged",
  ],
  ["confirmed with no block (a no-op write): final", { ...sent, status: "confirmed" }, seen(), "finalize"],
  ["failed with no block (abandoned): final", { ...sent, status: "failed" }, seen(), "finalize"],
  [
    "taken over while queued (killed before its broadcast's answer): sent, clock started",
    { ...sent, status: "queued", pendingSince: null, pendingSinceAt: null },
    seen(),
    "startClock",
  ],
  [
    "seen unmined for the first time: clock started",
    { ...sent, pendingSince: null, pendingSinceAt: null },
    seen(),
    "startClock",
  ],
  ["the node does not know its transaction: broadcast again", sent, seen({ node: "unknown" }), "rebroadcast"],
  ["known to the node, unmined for less than TX_RESEND_BLOCKS and 10 s: waits", sent, seen({ node: "known" }), "wait"],
  [
    "unmined for TX_RESEND_BLOCKS blocks: the sender's nonce is read first",
    { ...sent, pendingSince: HEAD - 3 },
    seen({ node: "known" }),
    "readNonce",
  ],
  [
    "unmined for 10 s on a chain that mines nothing (an automining node stuck behind a gap): nonce read",
    { ...sent, pendingSince: HEAD, pendingSinceAt: new Date(NOW - 10_000) },
    seen({ node: "known" }),
    "readNonce",
  ],
  [
    "clock stored by an earlier process without its wall time (before migration 16): looked into",
    { ...sent, pendingSince: HEAD, pendingSinceAt: null },
    seen({ node: "known" }),
    "readNonce",
  ],
  [
    "stuck, lower nonces missing on chain: fill those nobody holds",
    { ...sent, pendingSince: HEAD - 3 },
    seen({ chainNonce: 2 }),
    "fillBelow",
    { chainNonce: 2 } as Partial<Step>,
  ],
  [
    "stuck, another transaction took its nonce: re-signed at a new one",
    { ...sent, pendingSince: HEAD - 3 },
    seen({ chainNonce: 6 }),
    "resign",
  ],
  [
    "stuck, its nonce is next: replaced with higher fees",
    { ...sent, pendingSince: HEAD - 3 },
    seen({ chainNonce: 5 }),
    "replace",
  ],
];

describe("the follower's next step (a pure function of the row and what the chain showed)", function () {
  for (const [situation, op, chain, kind, fields] of table) {
    it(`${situation}: ${kind}`, function () {
      const rules = situation.includes("CONFIRMATIONS 3") ? { ...RULES, confirmations: 3 } : RULES;
      const step = nextStep(op, chain, rules);
      expect(step.kind).to.equal(kind);
      if (fields) expect(step).to.include(fields);
    });
  }

  it("the node is asked about a sent transaction at a new block, or after 2 s on a still head, never about a mined or final one", function () {
    expect(askNode(sent, { head: HEAD, now: NOW }, 2_000)).to.equal(true); // head 100 > clock 99
    expect(askNode({ ...sent, pendingSince: HEAD }, { head: HEAD, now: NOW }, 2_000)).to.equal(false);
    expect(
      askNode({ ...sent, pendingSince: HEAD, pendingSinceAt: new Date(NOW - 2_000) }, { head: HEAD, now: NOW }, 2_000),
    ).to.equal(true);
    // A clock with no wall time (written before migration 16, or by a process that died) is due at once.
    expect(askNode({ ...sent, pendingSince: HEAD, pendingSinceAt: null }, { head: HEAD, now: NOW }, 2_000)).to.equal(
      true,
    );
    expect(askNode(confirmedAt(99), { head: HEAD, now: NOW }, 2_000)).to.equal(false);
    expect(askNode({ ...sent, blockNumber: 99, blockHash: "0xb99" }, { head: HEAD, now: NOW }, 2_000)).to.equal(false);
  });
});
