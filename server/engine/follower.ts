import type { BlockHeader, Subscription } from "../chain/block-feed";
import type { OwnTransaction } from "../chain/own-blocks";
import type { Receipt } from "../chain/receipt";
import { ApiError, errorBody } from "../http/errors";
import { broadcast, type BroadcastOutcome } from "./broadcast";
import type { EngineContext, RequestPath } from "./context";
import { askNode, nextStep, type FollowRules, type Seen, type Step } from "./next-step";
import { currentTransaction, type Operation, type SignedTransaction } from "./operation";
import { NonceTaken, type OperationPatch } from "./operation-store";
import { knownToNode, latestNonces, receiptsOf, stillMined } from "./follower-reads";
import { FinalityTag } from "./finality-tag";
import { unheldBetween } from "./nonce-holders";
import { feesOf, signCall, targetAddress } from "./signing";
import { confirmedBody } from "./write-response";

/** Gas of a plain transfer: what a nonce fill (a 0-value transfer to oneself) costs. */
const TRANSFER_GAS = 21_000n;
/** Senders worked on at once within one pass. */
const CONCURRENCY = 8;
/** How long an unchanged head goes before operations are looked at again anyway. */
const STILL_HEAD_RECHECK_MS = 2_000;
/** How long an unmined transaction waits, at most, before it is looked into (beside TX_RESEND_BLOCKS blocks). */
const RESEND_MS = 10_000;
/** Missing nonces filled at most per stuck operation and pass. */
const MAX_FILLS = 16;
/** Blocks read one by one for hashes of ours; past that many since the last pass, receipts are asked for directly. */
const MAX_BLOCKS_PER_PASS = 12;
/** How long a finished operation is remembered, so that a scan read before it finished does not take it up again. */
const FINISHED_MEMORY_MS = 60_000;

/**
 * Follows every operation this process holds until its block is final, in the background, once
 * per block of the process's block feed (and every 2 s while the head stands still). Each pass
 * gathers what the chain shows (receipts, whether blocks still stand, whether the node knows a
 * transaction, a sender's nonce) and asks `nextStep` what to do with each operation; this class
 * carries out the answer. What it keeps in memory is a cache it can lose at any moment: the rows
 * are the truth, and a scan of the store takes over what nobody follows (after a restart, or from
 * a process that went away).
 */
export class Follower {
  /** The rows this process holds leases on, as last written. */
  private readonly tracked = new Map<string, Operation>();
  private readonly waiters = new Map<string, Set<(op: Operation | null) => void>>();
  /** The head and wall time at which each operation was last looked at: throttles passes. */
  private readonly checkedAt = new Map<string, { head: number; at: number }>();
  /** Recycled nonces and the head at which they were first seen waiting. */
  private readonly recycledSince = new Map<string, number>();
  private readonly warned = new Set<string>();
  /** Operations finished here lately, with when. */
  private readonly finished = new Map<string, number>();
  /** The head of the last pass: blocks after it are read for our hashes. */
  private lastHead?: number;
  /** The pass head at which a write of this process was broadcast: until another pass, its receipt can only be in a new block. */
  private readonly sentAfter = new Map<string, number>();
  /** What the node's `finalized` block says, and when to ask it. */
  private readonly finality: FinalityTag;
  private running = false;
  private subscription?: Subscription;
  private scanTimer?: NodeJS.Timeout;
  private pass?: Promise<void>;
  private readonly rules: FollowRules;

  constructor(
    private readonly ctx: EngineContext,
    private readonly requests: RequestPath,
  ) {
    this.finality = new FinalityTag(ctx.options.finalityBlocks);
    this.rules = {
      confirmations: ctx.options.confirmations,
      resendBlocks: ctx.options.resendBlocks,
      resendMs: RESEND_MS,
    };
  }

  start(): void {
    this.running = true;
    void this.scan();
  }

  /** Stops following; what is unfinished stays in the store for the next start (or another process). */
  async stop(): Promise<void> {
    this.running = false;
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    clearTimeout(this.scanTimer);
    await this.pass?.catch(() => {});
    for (const [id, waiting] of this.waiters) for (const resolve of waiting) resolve(this.tracked.get(id) ?? null);
    this.waiters.clear();
    await this.ctx.store.releaseLeases(this.ctx.owner).catch(() => {});
  }

  /**
   * Follows `op` from now on (it is already leased to this process). `broadcastAfter`: the pass
   * head (`passHead`) read before its transaction was broadcast here, which spares its first
   * receipt lookup when no pass ran in between.
   */
  track(op: Operation, broadcastAfter?: number): void {
    this.tracked.set(op.id, op);
    if (broadcastAfter !== undefined) this.sentAfter.set(op.id, broadcastAfter);
    this.listen();
  }

  /** The head of the last pass, if the follower follows anything. */
  get passHead(): number | undefined {
    return this.lastHead;
  }

  /** The operation once it is confirmed or failed, or null if it is not within `ms` (or the follower stops). */
  waitFor(id: string, ms: number): Promise<Operation | null> {
    return new Promise((resolve) => {
      const waiting = this.waiters.get(id) ?? new Set();
      this.waiters.set(id, waiting);
      const done = (op: Operation | null) => {
        clearTimeout(timer);
        waiting.delete(done);
        if (waiting.size === 0) this.waiters.delete(id);
        resolve(op);
      };
      const timer = setTimeout(() => done(this.tracked.get(id) ?? null), ms);
      waiting.add(done);
    });
  }

  get size(): number {
    return this.tracked.size;
  }

  /**
   * Confirms (or fails, for a revert) `op` from its receipt, stores its answer and wakes its
   * waiters. It is followed on until its block is final, unless it already is.
   */
  async settle(op: Operation, receipt: Receipt, finalHeight = -1): Promise<Operation> {
    const kind = this.ctx.kinds.get(op.operation);
    const paid = op.transactions.find((tx) => tx.hash === receipt.hash);
    if (paid) this.ctx.chain.fees.observe(receipt.effectiveGasPrice, feesOf(paid));
    const patch: OperationPatch = {
      blockNumber: receipt.blockNumber,
      blockHash: receipt.blockHash,
      final: receipt.blockNumber <= finalHeight,
    };
    if (receipt.status === 1) {
      const result = kind ? kind.result(receipt, op) : {};
      patch.status = "confirmed";
      patch.result = result;
      patch.error = null;
      patch.response = { status: kind?.successStatus ?? 200, body: confirmedBody(op, receipt, result) };
      if (receipt.contractAddress) patch.contractAddress = receipt.contractAddress;
      if (op.call) this.ctx.chain.confirmedWrite(op.call.to, op.call.data, receipt.blockNumber);
    } else {
      const error = new ApiError(
        "CONTRACT_REVERTED",
        `Transaction ${receipt.hash} reverted on chain after a successful simulation`,
      );
      patch.status = "failed";
      patch.result = null;
      patch.error = { code: "CONTRACT_REVERTED", message: error.message };
      patch.response = { status: error.status, body: JSON.stringify(errorBody(error, op.id)) };
    }
    await this.patch(op, patch);
    this.ctx.metrics?.operationStatus(op.status);
    this.answered(op);
    return op;
  }

  /** Wakes the waiters of an operation that is confirmed or failed; follows it on until it is final. */
  private answered(op: Operation): void {
    if (op.final) this.forget(op);
    else this.track(op);
    for (const resolve of this.waiters.get(op.id) ?? []) resolve(op);
  }

  private forget(op: Operation): void {
    this.tracked.delete(op.id);
    this.checkedAt.delete(op.id);
    this.sentAfter.delete(op.id);
    this.finished.set(op.id, Date.now());
    // Nothing left to follow: the next operation's receipts are asked for directly, not through
    // every block mined while the follower sat idle.
    if (this.tracked.size === 0) this.lastHead = undefined;
  }

  /** Follows the head through the block feed (now) while anything is tracked. */
  private listen(): void {
    if (!this.running || this.tracked.size === 0) return;
    if (this.subscription) this.ctx.blocks.poke();
    else this.subscription = this.ctx.blocks.subscribe(({ head }) => this.onHead(head));
  }

  private async onHead(head: number): Promise<void> {
    if (!this.running || this.tracked.size === 0) {
      this.subscription?.unsubscribe();
      this.subscription = undefined;
      return;
    }
    this.pass = this.poll(head);
    await this.pass;
  }

  private async poll(head: number): Promise<void> {
    const now = Date.now();
    // Due at a new head (a reorg can lower it), or when the head has stood still a while: a node
    // that only mines on demand makes no blocks while a gap holds everything back.
    const due = [...this.tracked.values()].filter((op) => {
      if (this.requests.isBeingSent(op.id)) return false;
      const checked = this.checkedAt.get(op.id);
      return !checked || checked.head !== head || now - checked.at >= STILL_HEAD_RECHECK_MS;
    });
    if (due.length === 0) return;
    // Registered before the first await: the index, handed the same head, waits for this pass's receipts.
    const looked = this.ctx.blocks.own.looking(head);
    try {
      await this.followAt(head, due, looked);
    } catch (err) {
      this.ctx.logger.warn({ err: describe(err) }, "follower pass failed; retrying at the next block");
    } finally {
      looked();
    }
  }

  private async scan(): Promise<void> {
    if (!this.running) return;
    const forgetBefore = Date.now() - FINISHED_MEMORY_MS;
    for (const [id, at] of this.finished) if (at < forgetBefore) this.finished.delete(id);
    try {
      const following = [...this.tracked.keys()];
      await this.ctx.store.renewLeases(this.ctx.owner, following, this.ctx.options.leaseMs);
      const claimed = await this.ctx.store.claimUnfinished(
        this.ctx.options.chainId.toString(),
        this.ctx.owner,
        this.ctx.options.leaseMs,
        1000,
        [...following, ...this.finished.keys(), ...this.requests.requestsInFlight()],
      );
      for (const op of claimed) {
        // Read before it finished here, or still in its request's hands: not one to take up.
        if (this.tracked.has(op.id) || this.finished.has(op.id) || this.requests.isInRequest(op.id)) continue;
        this.ctx.logger.info({ operationId: op.id, status: op.status }, "following operation taken from the store");
        this.tracked.set(op.id, op);
      }
      this.listen();
    } catch (err) {
      this.ctx.logger.warn({ err: describe(err) }, "scanning the store for unfinished operations failed");
    }
    if (this.running) this.scanTimer = setTimeout(() => void this.scan(), this.ctx.options.scanMs);
  }

  /** One pass over `ops` at chain head `head`: what the chain shows, then each operation's next step. */
  private async followAt(head: number, ops: Operation[], looked: () => void): Promise<void> {
    const now = Date.now();
    const newHead = this.lastHead !== head;
    const { receipts, standing } = await this.findReceipts(head, ops);
    this.proveOwnBlocks(ops, receipts);
    looked();
    for (const op of ops) {
      if (receipts.has(op.id) && !this.checkedAt.has(op.id) && op.status !== "confirmed") {
        this.requests.receiptWasThereAtOnce(); // mined by the first look: an automining chain, most likely
      }
      this.checkedAt.set(op.id, { head, at: now });
    }
    const mined = newHead ? ops.flatMap((op) => (op.blockNumber === null ? [] : [op.blockNumber])) : [];
    const finalHeight = await this.finality.height(head, mined.length > 0 ? Math.min(...mined) : undefined, () =>
      this.askFinalized(),
    );
    const seen = new Map<Operation, Seen>(
      ops.map((op) => [op, { head, finalHeight, now, receipt: receipts.get(op.id) }]),
    );
    for (const op of standing) seen.get(op)!.mined = "mined";
    const recordedMined = ops.filter((op) => op.blockNumber !== null && !receipts.has(op.id) && !standing.has(op));
    for (const [op, verdict] of await stillMined(this.ctx.chain.rpc, recordedMined)) seen.get(op)!.mined = verdict;
    const asking = ops.filter((op) => !receipts.has(op.id) && askNode(op, seen.get(op)!, STILL_HEAD_RECHECK_MS));
    for (const [op, known] of await knownToNode(this.ctx.chain.rpc, asking)) seen.get(op)!.node = known;

    const steps = new Map<Operation, Step>(ops.map((op) => [op, nextStep(op, seen.get(op)!, this.rules)]));
    // Past their resend clock: the senders' nonces, read after a receipt lookup of their own. The
    // receipts of this pass came only from the blocks mined since the last one, and one mined in a
    // block read while it was not due would pass for unmined: re-signed, it would be minted twice.
    const needNonce = ops.filter((op) => steps.get(op)!.kind === "readNonce");
    // The nonce first: a transaction mined between the two reads then shows its receipt.
    const chainNonces = await latestNonces(this.ctx.chain.rpc, needNonce);
    const late = await receiptsOf(this.ctx.chain.rpc, needNonce);
    for (const op of needNonce) {
      const chainNonce = chainNonces.get(op.from);
      const receipt = late.get(op.id);
      if (receipt) steps.set(op, nextStep(op, { ...seen.get(op)!, receipt }, this.rules));
      else if (chainNonce === undefined) steps.set(op, { kind: "wait" });
      else steps.set(op, nextStep(op, { ...seen.get(op)!, chainNonce }, this.rules));
    }

    // What needs no order goes together: settling (a block of 200 mints answers 200 requests at
    // once), block records, finality, and the clocks of those seen unmined for the first time.
    const ordered: Operation[] = [];
    await Promise.all(
      ops.map((op) => {
        const step = steps.get(op)!;
        switch (step.kind) {
          case "settle":
            return this.settle(op, step.receipt, finalHeight);
          case "recordBlock":
            return this.patch(op, { blockNumber: step.receipt.blockNumber, blockHash: step.receipt.blockHash });
          case "finalize":
            return this.patch(op, { final: true }).then(() => this.forget(op));
          case "startClock":
            return this.patch(op, { status: "sent", pendingSince: head, pendingSinceAt: new Date(now) });
          case "wait":
          case "readNonce":
            return;
          default:
            ordered.push(op);
        }
      }),
    );
    // The rest sends: each sender's in nonce order (a node that refuses gaps takes them only so),
    // senders side by side.
    const filling = new Set<string>();
    const bySender = new Map<string, Operation[]>();
    for (const op of ordered) bySender.set(op.from, [...(bySender.get(op.from) ?? []), op]);
    await inPool([...bySender.values()], CONCURRENCY, async (list) => {
      for (const op of list.sort((a, b) => (a.nonce ?? 0) - (b.nonce ?? 0)))
        await this.carryOut(op, steps.get(op)!, head, filling);
    });
    await this.fillRecycled(head, filling);
  }

  private async carryOut(op: Operation, step: Step, head: number, filling: Set<string>): Promise<void> {
    switch (step.kind) {
      case "reorged":
        return this.reorged(op, head);
      case "rebroadcast":
        return this.rebroadcast(op, head, filling);
      case "fillBelow":
        return this.fillBelow(op, step.chainNonce, head, filling);
      case "resign":
        return this.resignAtNewNonce(op);
      case "replace":
        return this.replace(op, head);
    }
  }

  /**
   * Hands the receipts of this pass to the feed's OwnBlocks: a block they prove to hold only our
   * transactions needs no eth_getLogs of the index. A block whose transactions this pass did not
   * all read (ours in other passes, anyone else's) is not proven: the index asks the node.
   */
  private proveOwnBlocks(ops: Operation[], receipts: Map<string, Receipt>): void {
    const mined: OwnTransaction[] = [];
    for (const op of ops) {
      const receipt = receipts.get(op.id);
      const tx = receipt && op.transactions.find((t) => t.hash.toLowerCase() === receipt.hash.toLowerCase());
      if (receipt && tx) mined.push({ receipt, raw: tx.raw });
    }
    if (mined.length > 0) this.ctx.blocks.own.prove(mined);
  }

  /** The node's `finalized` block number, or null when it answers none. */
  private async askFinalized(): Promise<number | null> {
    const block = await this.ctx.chain.rpc.call<{ number?: string } | null>("eth_getBlockByNumber", [
      "finalized",
      false,
    ]);
    return block?.number ? Number(BigInt(block.number)) : null;
  }

  /**
   * Receipts of the operations that may have one: those looked at for the first time (taken over,
   * or a lost broadcast), those with a block (a reorg may take it), and those a reorg sent back get
   * their own lookup; the others only when one of their hashes is in a block mined since the last
   * pass. Operations answered already are looked up only when their block is no longer at its height.
   */
  private async findReceipts(
    head: number,
    ops: Operation[],
  ): Promise<{ receipts: Map<string, Receipt>; standing: Set<Operation> }> {
    const since = this.lastHead;
    this.lastHead = head;
    const answered = ops.filter((op) => op.status === "confirmed" || op.status === "failed");
    const moved = await this.blocksMoved(head, answered);
    const standing = new Set(answered.filter((op) => !moved.includes(op)));
    const open = ops.filter((op) => op.status !== "confirmed" && op.status !== "failed");
    let looked = open;
    if (since !== undefined && head > since && head - since <= MAX_BLOCKS_PER_PASS) {
      // Looked up whatever the new blocks hold: seen for the first time (taken over, a lost
      // broadcast, or a pass ran between its broadcast and now), mined already, or sent back by a reorg.
      const direct = (op: Operation) =>
        (!this.checkedAt.has(op.id) && this.sentAfter.get(op.id) !== since) || op.blockNumber !== null || op.reorgs > 0;
      const rest = open.filter((op) => !direct(op));
      const mined = rest.length > 0 ? await this.minedHashes(since + 1, head, rest.length) : null;
      // Blocks we could not read, or cheaper to ask every receipt: look every operation up.
      if (mined || rest.length === 0)
        looked = open.filter((op) => direct(op) || op.transactions.some((tx) => mined?.has(tx.hash.toLowerCase())));
    }
    for (const op of open) this.sentAfter.delete(op.id);
    return { receipts: await receiptsOf(this.ctx.chain.rpc, [...looked, ...moved]), standing };
  }

  /**
   * The transaction hashes of blocks `from`..`to`, from the feed's kept headers; blocks a
   * subscription announced have none, and are read only when that costs fewer calls than asking
   * the receipts of the `asking` operations outright (null then, as when they cannot be read).
   */
  private async minedHashes(from: number, to: number, asking: number): Promise<Set<string> | null> {
    const blocks = await this.ctx.blocks.blocks(from, to);
    if (!blocks) return null;
    const unread = blocks.filter((block) => block.transactions === undefined);
    if (unread.length > 0) {
      if (asking <= unread.length) return null;
      const read = await this.ctx.blocks.withTransactions(unread.map((block) => block.number));
      if (!read) return null;
      for (const block of read) blocks[block.number - from] = block;
    }
    return new Set(blocks.flatMap((block) => block.transactions ?? []));
  }

  /**
   * The answered operations whose block is not the one at its height now, by the feed's kept
   * headers: those alone need a receipt lookup. One batch of the headers the feed does not keep.
   */
  private async blocksMoved(head: number, answered: Operation[]): Promise<Operation[]> {
    if (answered.length === 0) return [];
    const lowest = Math.min(...answered.map((op) => op.blockNumber ?? head));
    const headers: BlockHeader[] | null = lowest <= head ? await this.ctx.blocks.blocks(lowest, head) : [];
    if (!headers) return answered; // a reorg under way: look them up
    const hashAt = new Map(headers.map((h) => [h.number, h.hash.toLowerCase()]));
    return answered.filter(
      (op) => op.blockNumber === null || hashAt.get(op.blockNumber) !== op.blockHash?.toLowerCase(),
    );
  }

  /**
   * A reorg removed the operation's receipt: back to sent (its answer withdrawn, so a replay shows
   * where it stands), counted, and its signed transaction broadcast again at the same nonce, so it
   * is mined once. The following passes take it from there like any unmined operation.
   */
  private async reorged(op: Operation, head: number): Promise<void> {
    this.ctx.logger.warn(
      { operationId: op.id, blockNumber: op.blockNumber, status: op.status },
      "receipt removed by a reorg",
    );
    await this.patch(op, {
      status: "sent",
      blockNumber: null,
      blockHash: null,
      result: null,
      error: null,
      response: null,
      final: false,
      reorgs: op.reorgs + 1,
      pendingSince: head,
      pendingSinceAt: new Date(),
    });
    this.tracked.set(op.id, op);
    const outcome = await broadcast(this.ctx.chain.rpc, currentTransaction(op)!.raw, op.nonce!);
    this.ctx.logger.info({ operationId: op.id, outcome: outcome.kind }, "reorged transaction broadcast again");
  }

  /**
   * One broadcast of `op`'s transaction that no request asked for: unless its owner withdrew it
   * (the resend guard: a cancelled job's), which gives it up and recycles its nonce, unused on chain.
   */
  private async sendAgain(op: Operation, raw: string): Promise<BroadcastOutcome | "withdrawn"> {
    const send = () => broadcast(this.ctx.chain.rpc, raw, op.nonce!);
    const outcome = this.ctx.resendGuard ? await this.ctx.resendGuard.sendAgain(op, send) : await send();
    if (outcome === "withdrawn") await this.abandon(op, "withdrawn before the node had it (its job was cancelled)");
    return outcome;
  }

  /** The node does not know the operation's transaction: the same signed transaction, again. */
  private async rebroadcast(op: Operation, head: number, filling: Set<string>): Promise<void> {
    const outcome = await this.sendAgain(op, currentTransaction(op)!.raw);
    if (outcome === "withdrawn") return;
    this.ctx.logger.info({ operationId: op.id, outcome: outcome.kind }, "transaction unknown to the node: sent again");
    switch (outcome.kind) {
      case "accepted":
        return this.patch(op, { pendingSince: head, pendingSinceAt: new Date() });
      case "lost":
      case "unreachable":
        return;
      case "nonceTooLow":
      case "nonceTooHigh": {
        const chainNonce = await this.ctx.chain.transactionCount(op.from, "latest");
        if (chainNonce < op.nonce!) return this.fillBelow(op, chainNonce, head, filling);
        if (chainNonce > op.nonce! && (await receiptsOf(this.ctx.chain.rpc, [op])).size === 0)
          return this.resignAtNewNonce(op);
        return;
      }
      case "underpriced":
      case "replacementUnderpriced":
        return this.replace(op, head);
      case "refused":
        return this.abandon(op, outcome.error.message);
    }
  }

  /**
   * Lower nonces of the sender are missing on chain. Those an unfinished operation holds are
   * followed on their own (broadcast again when the node lost them); the others nobody will ever
   * send: fill them, so that this one can be mined.
   */
  private async fillBelow(op: Operation, chainNonce: number, head: number, filling: Set<string>): Promise<void> {
    const nonce = op.nonce!;
    // Held: by a row, or by a take of this process not yet recorded (a write, a re-sign, a fill).
    const held = await this.requests.heldNonces(op.from, nonce);
    for (const missing of unheldBetween(chainNonce, nonce, held, MAX_FILLS)) {
      const key = `${op.from}:${missing}`;
      if (filling.has(key)) continue;
      filling.add(key);
      await this.ctx.nonces.claimRecycled(op.from, missing);
      await this.fill(op.from, missing);
    }
    await this.patch(op, { pendingSince: head, pendingSinceAt: new Date() });
  }

  /** Replaces the current transaction at the same nonce with fees ≥ +12.5% and ≥ the quote, capped. */
  private async replace(op: Operation, head: number): Promise<void> {
    const signer = await this.signerOf(op);
    if (!signer) return;
    const fees = await this.ctx.chain.fees.bump(feesOf(currentTransaction(op)!));
    if (!fees) {
      this.warnOnce(op, "fee-cap", "MAX_FEE_PER_GAS leaves no room to replace a stuck transaction; waiting");
      await this.patch(op, { pendingSince: head, pendingSinceAt: new Date() });
      return;
    }
    const replacement = await signCall(signer, this.ctx.options.chainId, op.nonce!, op.call!, fees);
    // Stored before it is sent, so that a crash in between cannot lose it if it is mined; marked
    // unsent until the node answers, so that operation.replaced is written only for one it took.
    await this.patch(op, { transactions: [...op.transactions, { ...replacement, unsent: true }] });
    const outcome = await broadcast(this.ctx.chain.rpc, replacement.raw, op.nonce!);
    this.ctx.logger.info(
      { operationId: op.id, transactionHash: replacement.hash, outcome: outcome.kind },
      "stuck transaction replaced with higher fees",
    );
    const restart = { pendingSince: head, pendingSinceAt: new Date() };
    if (outcome.kind === "accepted" || outcome.kind === "lost") {
      const sent = op.transactions.map((tx) => (tx.hash === replacement.hash ? replacement : tx));
      await this.patch(op, { transactions: sent, ...restart });
    } else {
      // Refused: it never entered a mempool, so it is not one of the operation's transactions.
      await this.patch(op, { transactions: withoutHash(op.transactions, replacement.hash), ...restart });
    }
  }

  /**
   * Another transaction took the operation's nonce: a new nonce, held (NonceHolders) from its take
   * until the store records it and it is broadcast, so that nothing else is handed it meanwhile.
   * The store refuses it if another operation holds it after all (another process, NonceTaken):
   * then the next pass decides again, and that nonce is not given back.
   */
  private async resignAtNewNonce(op: Operation): Promise<void> {
    const signer = await this.signerOf(op);
    if (!signer) return;
    const nonce = await this.requests.takeNonceFor(op.id, op.from);
    try {
      await this.requests.crashPoint("resign-nonce-taken");
      const tx = await signCall(
        signer,
        this.ctx.options.chainId,
        nonce,
        op.call!,
        await this.ctx.chain.fees.quote(true),
      );
      const patch: OperationPatch = {
        nonce,
        contractAddress: targetAddress(op.from, op.call!, nonce),
        transactions: [...op.transactions, tx],
        pendingSince: null,
        pendingSinceAt: null,
      };
      try {
        await this.ctx.store.update(op.id, patch); // recorded first: the row in memory follows the store
      } catch (err) {
        if (!(err instanceof NonceTaken)) throw err;
        this.ctx.logger.warn({ operationId: op.id, nonce }, "re-sign refused: another operation holds that nonce");
        return;
      }
      Object.assign(op, patch);
      this.ctx.logger.warn(
        { operationId: op.id, from: op.nonce, to: nonce },
        "nonce used by another transaction: re-signed",
      );
      await this.sendAgain(op, tx.raw);
    } finally {
      this.requests.releaseNonce(op.id);
    }
  }

  /** Gives up an operation the node refuses for good; its nonce is filled so later ones can be mined. */
  private async abandon(op: Operation, reason: string): Promise<void> {
    const error = new ApiError("TRANSACTION_ABANDONED", `The service gave up this transaction: ${reason}`);
    await this.patch(op, {
      status: "failed",
      error: { code: "TRANSACTION_ABANDONED", message: error.message },
      response: { status: error.status, body: JSON.stringify(errorBody(error, op.id)) },
      final: true,
    });
    await this.ctx.nonces.recycle(op.from, op.nonce!);
    this.ctx.logger.warn({ operationId: op.id, nonce: op.nonce, reason }, "operation abandoned");
    this.ctx.metrics?.operationStatus(op.status);
    this.answered(op);
  }

  /**
   * Recycled nonces that no write took within a block, below a nonce this process still follows:
   * later transactions wait on them, so fill them.
   */
  private async fillRecycled(head: number, filling: Set<string>): Promise<void> {
    const recycled = await this.ctx.nonces.recycled();
    const waiting = new Set(recycled.map(({ address, nonce }) => `${address}:${nonce}`));
    for (const key of this.recycledSince.keys()) if (!waiting.has(key)) this.recycledSince.delete(key);
    for (const { address, nonce } of recycled) {
      const key = `${address}:${nonce}`;
      const since = this.recycledSince.get(key);
      if (since === undefined) {
        this.recycledSince.set(key, head);
        continue;
      }
      const blocked = [...this.tracked.values()].some(
        (op) => op.from === address && op.blockNumber === null && (op.nonce ?? -1) > nonce,
      );
      if (since >= head || !blocked || filling.has(key)) continue;
      if (!(await this.ctx.signers.signerOf(address))) continue;
      if (!(await this.ctx.nonces.claimRecycled(address, nonce))) continue;
      filling.add(key);
      this.recycledSince.delete(key);
      await this.fill(address, nonce);
    }
  }

  /** Sends a 0-value transfer to oneself at `nonce`, followed like any operation ("nonceFill"). */
  private async fill(address: string, nonce: number): Promise<void> {
    const signer = await this.ctx.signers.signerOf(address);
    if (!signer) {
      this.warnOnce({ id: `${address}:${nonce}` }, "fill-key", "a nonce gap waits for its key's next request");
      await this.ctx.nonces.recycle(address, nonce);
      return;
    }
    const op = this.requests.newOperation(
      { operation: "nonceFill", signer, context: {}, fingerprint: "nonceFill" },
      null,
    );
    op.call = { to: address, data: "0x", value: 0n, gasLimit: TRANSFER_GAS };
    op.nonce = nonce;
    this.requests.holdNonce(op.id, address, nonce);
    try {
      op.transactions = [
        await signCall(signer, this.ctx.options.chainId, nonce, op.call, await this.ctx.chain.fees.quote(true)),
      ];
      try {
        await this.requests.insert(op);
      } catch (err) {
        // Another operation holds the nonce (a write, a re-sign or another process's fill): it is theirs to send.
        if (err instanceof NonceTaken) return;
        throw err;
      }
      await this.broadcastFill(op, address, nonce);
    } finally {
      this.requests.releaseNonce(op.id);
    }
  }

  private async broadcastFill(op: Operation, address: string, nonce: number): Promise<void> {
    const outcome = await broadcast(this.ctx.chain.rpc, currentTransaction(op)!.raw, nonce);
    this.ctx.logger.info(
      { operationId: op.id, nonce, outcome: outcome.kind },
      "nonce gap filled with a 0-value transfer",
    );
    if (outcome.kind === "accepted" || outcome.kind === "lost") {
      op.status = "sent";
      await this.ctx.store.update(op.id, { status: "sent" });
      this.ctx.metrics?.operationStatus("sent");
      this.tracked.set(op.id, op);
    } else {
      await this.ctx.store.delete(op.id);
    }
  }

  private async signerOf(op: Operation) {
    const signer = await this.ctx.signers.signerOf(op.from);
    if (!signer)
      this.warnOnce(op, "key", "a stuck transaction needs a new signature: waiting for its key's next request");
    return signer;
  }

  /**
   * Applies `patch` to the operation in the store, then in memory: a patch the store refuses (a
   * transaction hash of another operation, NonceTaken) never stands in memory as if recorded.
   */
  private async patch(op: Operation, patch: OperationPatch): Promise<void> {
    await this.ctx.store.update(op.id, patch);
    Object.assign(op, patch);
  }

  private warnOnce(op: Pick<Operation, "id">, what: string, message: string): void {
    const key = `${op.id}:${what}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.ctx.logger.warn({ operationId: op.id }, message);
  }
}

function withoutHash(transactions: SignedTransaction[], hash: string): SignedTransaction[] {
  return transactions.filter((tx) => tx.hash !== hash);
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function inPool<T>(items: T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await work(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** An error's kind and message, never its parameters (a database error can carry them). */
function describe(err: unknown): { name?: string; message?: string } {
  return err instanceof Error ? { name: err.name, message: err.message.slice(0, 300) } : {};
}
