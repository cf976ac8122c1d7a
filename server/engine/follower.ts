import { toQuantity } from "ethers";
import type { Subscription } from "../chain/block-feed";
import { parseReceipt, type Receipt } from "../chain/receipt";
import type { RpcAnswer } from "../chain/rpc";
import { ApiError, errorBody } from "../http/errors";
import { broadcast } from "./broadcast";
import type { EngineContext } from "./context";
import { currentTransaction, type Operation, type SignedTransaction } from "./operation";
import { feesOf, signCall, targetAddress } from "./signing";
import type { TransactionEngine } from "./transaction-engine";
import type { OperationPatch } from "./operation-store";
import { confirmedBody } from "./write-response";

/** Gas of a plain transfer: what a nonce fill (a 0-value transfer to oneself) costs. */
const TRANSFER_GAS = 21_000n;
/** Operations worked on at once within one block's pass. */
const CONCURRENCY = 8;
/** How long an unchanged head goes before operations are looked at again anyway. */
const STILL_HEAD_RECHECK_MS = 2_000;
/** Missing nonces filled at most per stuck operation and block. */
const MAX_FILLS = 16;
/** Blocks read one by one for hashes of ours; past that many since the last pass, receipts are asked for directly. */
const MAX_BLOCKS_PER_PASS = 12;
/** How long a finished operation is remembered, so that a scan read before it finished does not take it up again. */
const FINISHED_MEMORY_MS = 60_000;

/**
 * What the chain says of an operation seen mined whose receipt did not come this pass: still in its
 * block, taken out by a reorg (proven), or nothing proven (lookups failed or disagree).
 */
type MinedVerdict = "mined" | "reorged" | "unknown";

/**
 * Follows every unfinished operation this process holds, in the background, once per new block
 * (the process's block feed, subscribed only while there are any): fetches receipts,
 * confirms after CONFIRMATIONS blocks, fails on-chain reverts, notices receipts a reorg removed
 * (proven by the chain, never assumed from a lookup that failed), broadcasts again what the node
 * no longer knows, replaces what stays unmined for
 * TX_RESEND_BLOCKS blocks, and fills nonce gaps. A scan of the store, without any chain call,
 * takes over operations nobody holds: after a restart, or from a process that went away.
 */
export class Follower {
  private readonly tracked = new Map<string, Operation>();
  private readonly waiters = new Map<string, Set<(op: Operation | null) => void>>();
  /** The head at which each tracked operation was last looked at. */
  private readonly checkedAt = new Map<string, number>();
  private readonly checkedAtMs = new Map<string, number>();
  /** When each operation's resend clock (pendingSince) was last set, in wall time. */
  private readonly pendingSinceMs = new Map<string, number>();
  /** Recycled nonces and the head at which they were first seen waiting. */
  private readonly recycledSince = new Map<string, number>();
  private readonly warned = new Set<string>();
  /** The receipt each mined, not yet confirmed operation was seen with. */
  private readonly minedReceipts = new Map<string, Receipt>();
  /** Operations a reorg sent back: their receipt is asked for directly until they are mined again. */
  private readonly lookDirectly = new Set<string>();
  /** Operations finished here lately, with when. */
  private readonly finished = new Map<string, number>();
  /** The head of the last pass: blocks after it are read for our hashes. */
  private lastHead?: number;
  private running = false;
  private subscription?: Subscription;
  private scanTimer?: NodeJS.Timeout;
  private pass?: Promise<void>;

  constructor(
    private readonly ctx: EngineContext,
    private readonly engine: TransactionEngine,
  ) {}

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

  /** Follows `op` from now on (it is already leased to this process). */
  track(op: Operation): void {
    this.tracked.set(op.id, op);
    this.listen();
  }

  /** The operation once it is final, or null if it is not within `ms` (or the follower stops). */
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

  /** Confirms (or fails, for a revert) `op` from its receipt, stores its answer and wakes its waiters. */
  async settle(op: Operation, receipt: Receipt): Promise<Operation> {
    const kind = this.ctx.kinds.get(op.operation);
    const paid = op.transactions.find((tx) => tx.hash === receipt.hash);
    if (paid) this.ctx.chain.fees.observe(receipt.effectiveGasPrice, feesOf(paid));
    if (receipt.status === 1) {
      const result = kind ? kind.result(receipt, op) : {};
      op.status = "confirmed";
      op.result = result;
      op.response = { status: kind?.successStatus ?? 200, body: confirmedBody(op, receipt, result) };
      if (receipt.contractAddress) op.contractAddress = receipt.contractAddress;
    } else {
      const error = new ApiError(
        "CONTRACT_REVERTED",
        `Transaction ${receipt.hash} reverted on chain after a successful simulation`,
      );
      op.status = "failed";
      op.error = { code: "CONTRACT_REVERTED", message: error.message };
      op.response = { status: error.status, body: JSON.stringify(errorBody(error, op.id)) };
    }
    op.blockNumber = receipt.blockNumber;
    op.blockHash = receipt.blockHash;
    await this.ctx.store.update(op.id, {
      status: op.status,
      result: op.result,
      error: op.error,
      response: op.response,
      contractAddress: op.contractAddress,
      blockNumber: op.blockNumber,
      blockHash: op.blockHash,
    });
    this.finish(op);
    return op;
  }

  private finish(op: Operation): void {
    this.ctx.metrics?.operationStatus(op.status);
    this.tracked.delete(op.id);
    this.checkedAt.delete(op.id);
    this.checkedAtMs.delete(op.id);
    this.pendingSinceMs.delete(op.id);
    this.minedReceipts.delete(op.id);
    this.lookDirectly.delete(op.id);
    this.finished.set(op.id, Date.now());
    // Nothing left to follow: the next operation's receipts are asked for directly, not through
    // every block mined while the follower sat idle.
    if (this.tracked.size === 0) this.lastHead = undefined;
    for (const resolve of this.waiters.get(op.id) ?? []) resolve(op);
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
    const due = [...this.tracked.values()].filter(
      (op) =>
        !this.engine.isBeingSent(op.id) &&
        (this.checkedAt.get(op.id) !== head || now - (this.checkedAtMs.get(op.id) ?? 0) >= STILL_HEAD_RECHECK_MS),
    );
    if (due.length === 0) return;
    try {
      await this.followAt(head, due);
    } catch (err) {
      this.ctx.logger.warn({ err: describe(err) }, "follower pass failed; retrying at the next block");
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
        [...following, ...this.finished.keys(), ...this.engine.requestsInFlight()],
      );
      for (const op of claimed) {
        // Read before it finished here, or still in its request's hands: not one to take up.
        if (this.tracked.has(op.id) || this.finished.has(op.id) || this.engine.isInRequest(op.id)) continue;
        this.ctx.logger.info({ operationId: op.id, status: op.status }, "following operation taken from the store");
        this.tracked.set(op.id, op);
      }
      this.listen();
    } catch (err) {
      this.ctx.logger.warn({ err: describe(err) }, "scanning the store for unfinished operations failed");
    }
    if (this.running) this.scanTimer = setTimeout(() => void this.scan(), this.ctx.options.scanMs);
  }

  /** One pass over `ops` at chain head `head`. */
  private async followAt(head: number, ops: Operation[]): Promise<void> {
    const receipts = await this.findReceipts(head, ops);
    const unmined: Operation[] = [];
    const settling: Promise<unknown>[] = [];
    const doubtful: Operation[] = [];
    for (const op of ops) {
      const firstLook = !this.checkedAt.has(op.id);
      this.checkedAt.set(op.id, head);
      this.checkedAtMs.set(op.id, Date.now());
      const receipt = receipts.get(op.id);
      // Mined by the first look: the chain mines on each transaction (automine), most likely.
      if (receipt && firstLook) this.engine.receiptWasThereAtOnce();
      if (receipt) {
        this.lookDirectly.delete(op.id);
        // Settled together: a block of 200 mints answers 200 requests at once, not one by one.
        if (head >= receipt.blockNumber + this.ctx.options.confirmations - 1) {
          settling.push(this.settle(op, receipt));
        } else {
          this.minedReceipts.set(op.id, receipt);
          if (op.blockHash !== receipt.blockHash) settling.push(this.patch(op, receipt));
        }
        continue;
      }
      // Mined before, no receipt now: a failed or empty lookup proves nothing; the chain must show it.
      if (op.blockNumber !== null) doubtful.push(op);
      else unmined.push(op);
    }
    for (const [op, verdict] of await this.stillMined(doubtful)) {
      if (verdict === "reorged") {
        this.ctx.logger.warn({ operationId: op.id, blockNumber: op.blockNumber }, "receipt removed by a reorg");
        this.minedReceipts.delete(op.id);
        this.lookDirectly.add(op.id);
        settling.push(this.patch(op, { blockNumber: null, blockHash: null, pendingSince: head }));
        unmined.push(op);
        continue;
      }
      // Its block still stands (or nothing is proven): it stays mined, and is looked at again next pass.
      const seen = this.minedReceipts.get(op.id);
      if (verdict === "mined" && seen && head >= seen.blockNumber + this.ctx.options.confirmations - 1)
        settling.push(this.settle(op, seen));
    }
    await Promise.all(settling);
    if (unmined.length === 0) return;
    const now = Date.now();
    const unknown = await this.unknownToNode(
      unmined.filter(
        (op) =>
          op.pendingSince !== null &&
          (head > op.pendingSince || now - (this.pendingSinceMs.get(op.id) ?? now) >= STILL_HEAD_RECHECK_MS),
      ),
    );
    // What needs no order goes together, in one write: the resend clock of those seen unmined for
    // the first time (200 of a burst, written one after another, held the next pass back for seconds).
    const known = unmined.filter((op) => !unknown.has(op.id));
    await Promise.all(
      known
        .filter((op) => op.pendingSince === null || op.status === "queued")
        .map((op) =>
          // A queued one was taken over from a process that stopped between recording and broadcasting: maybe sent.
          this.patch(op, { status: "sent", ...(op.pendingSince === null ? { pendingSince: head } : {}) }),
        ),
    );
    const due = unmined.filter((op) => unknown.has(op.id) || head - op.pendingSince! >= this.ctx.options.resendBlocks);
    if (due.length === 0) return this.fillRecycled(head, new Set());
    const filling = new Set<string>();
    // Each sender's in nonce order (a node that refuses gaps takes them only so), senders side by side.
    const bySender = new Map<string, Operation[]>();
    for (const op of due) bySender.set(op.from, [...(bySender.get(op.from) ?? []), op]);
    await inPool([...bySender.values()], CONCURRENCY, async (ops) => {
      for (const op of ops.sort((a, b) => (a.nonce ?? 0) - (b.nonce ?? 0)))
        await this.followUnmined(op, head, !unknown.has(op.id), filling);
    });
    await this.fillRecycled(head, filling);
  }

  /**
   * Receipts of the operations that may have one: those looked at for the first time (taken over,
   * or a lost broadcast) and those mined but not yet deep enough (a reorg may take them) get their
   * own lookup; the others only when one of their hashes is in a block mined since the last pass.
   */
  private async findReceipts(head: number, ops: Operation[]): Promise<Map<string, Receipt>> {
    const since = this.lastHead;
    this.lastHead = head;
    if (since === undefined || head <= since || head - since > MAX_BLOCKS_PER_PASS) return this.receiptsOf(ops);
    // The feed read these blocks for its poll already; it reads only what it did not keep.
    const blocks = await this.ctx.blocks.blocks(since + 1, head);
    if (!blocks) return this.receiptsOf(ops); // blocks we could not read: look every operation up
    const mined = new Set(blocks.flatMap((block) => block.transactions));
    return this.receiptsOf(
      ops.filter(
        (op) =>
          !this.checkedAt.has(op.id) ||
          op.blockNumber !== null ||
          this.lookDirectly.has(op.id) ||
          op.transactions.some((tx) => mined.has(tx.hash.toLowerCase())),
      ),
    );
  }

  /**
   * Whether operations seen mined (whose receipt did not come this pass) still are. A reorg is
   * proven when the block at the operation's height has another hash, or when the chain answers
   * that its transaction is in no block (pending again, or in another block), or that neither the
   * block nor the transaction exists any more. The same block hash, or the transaction in that
   * block, keeps it mined; failed lookups prove nothing.
   */
  private async stillMined(ops: Operation[]): Promise<Map<Operation, MinedVerdict>> {
    const verdicts = new Map<Operation, MinedVerdict>();
    if (ops.length === 0) return verdicts;
    const heights = [...new Set(ops.map((op) => op.blockNumber!))];
    const calls: Array<[string, unknown[]]> = heights.map((n) => ["eth_getBlockByNumber", [toQuantity(n), false]]);
    for (const op of ops) for (const tx of op.transactions) calls.push(["eth_getTransactionByHash", [tx.hash]]);
    let answers: RpcAnswer[];
    try {
      answers = await this.ctx.chain.rpc.batch(calls);
    } catch {
      for (const op of ops) verdicts.set(op, "unknown");
      return verdicts;
    }
    const blocks = new Map<number, RpcAnswer>(heights.map((n, i) => [n, answers[i]]));
    let next = heights.length;
    for (const op of ops) {
      const block = blocks.get(op.blockNumber!)!;
      const txs = op.transactions.map(() => answers[next++]);
      verdicts.set(op, minedVerdict(op, block, txs));
    }
    return verdicts;
  }

  /**
   * The operations whose transaction the node no longer knows. A nonce below the sender's pending
   * count is in the node's hands; only the others are asked for by hash.
   */
  private async unknownToNode(ops: Operation[]): Promise<Set<string>> {
    if (ops.length === 0) return new Set();
    const senders = [...new Set(ops.map((op) => op.from))];
    const counts = await this.ctx.chain.rpc.batch(
      senders.map((from) => ["eth_getTransactionCount", [from, "pending"]]),
    );
    const pending = new Map<string, number>();
    counts.forEach((answer, i) => {
      if ("result" in answer) pending.set(senders[i], Number(BigInt(answer.result as string)));
    });
    const doubtful = ops.filter((op) => op.nonce! >= (pending.get(op.from) ?? 0));
    const answers = await this.ctx.chain.rpc.batch(
      doubtful.map((op) => ["eth_getTransactionByHash", [currentTransaction(op)!.hash]]),
    );
    const unknown = new Set<string>();
    answers.forEach((answer, i) => {
      if ("result" in answer && answer.result === null) unknown.add(doubtful[i].id); // an error proves nothing
    });
    return unknown;
  }

  /** The receipt of each operation's mined transaction (any of its hashes), by operation id. */
  private async receiptsOf(ops: Operation[]): Promise<Map<string, Receipt>> {
    const calls: Array<[string, unknown[]]> = [];
    const owners: string[] = [];
    for (const op of ops) {
      for (const tx of op.transactions) {
        calls.push(["eth_getTransactionReceipt", [tx.hash]]);
        owners.push(op.id);
      }
    }
    const answers = await this.ctx.chain.rpc.batch(calls);
    const receipts = new Map<string, Receipt>();
    answers.forEach((answer, i) => {
      const receipt = "result" in answer ? parseReceipt(answer.result) : null;
      if (receipt) receipts.set(owners[i], receipt);
    });
    return receipts;
  }

  private async followUnmined(op: Operation, head: number, isKnown: boolean, filling: Set<string>): Promise<void> {
    if (op.status === "queued") {
      // Taken over from a process that stopped between recording and broadcasting: maybe sent.
      await this.patch(op, { status: "sent" });
    }
    if (!isKnown) {
      const outcome = await broadcast(this.ctx.chain.rpc, currentTransaction(op)!.raw, op.nonce!);
      this.ctx.logger.info(
        { operationId: op.id, outcome: outcome.kind },
        "transaction unknown to the node: sent again",
      );
      switch (outcome.kind) {
        case "accepted":
          if (op.pendingSince === null) await this.patch(op, { pendingSince: head });
          return;
        case "lost":
        case "unreachable":
          return;
        case "nonceTooLow":
        case "nonceTooHigh":
          return this.unstick(op, head, filling);
        case "underpriced":
        case "replacementUnderpriced":
          return this.replace(op, head);
        case "refused":
          return this.abandon(op, outcome.error.message);
      }
    }
    if (op.pendingSince === null) return this.patch(op, { pendingSince: head });
    if (head - op.pendingSince >= this.ctx.options.resendBlocks) return this.unstick(op, head, filling);
  }

  /**
   * An operation unmined for TX_RESEND_BLOCKS blocks. The chain's nonce says why: below ours, lower
   * nonces are missing (fill those nobody holds); above ours, another transaction used our nonce
   * (re-sign at a new one: ours can never be mined); equal, our fees are too low (replace).
   */
  private async unstick(op: Operation, head: number, filling: Set<string>): Promise<void> {
    const latest = await this.ctx.chain.transactionCount(op.from, "latest");
    const nonce = op.nonce!;
    if (latest < nonce) {
      const held = new Set(
        await this.ctx.store.unfinishedNoncesBelow(this.ctx.options.chainId.toString(), op.from, nonce),
      );
      for (let missing = latest; missing < nonce && missing < latest + MAX_FILLS; missing++) {
        const key = `${op.from}:${missing}`;
        if (held.has(missing) || filling.has(key)) continue;
        filling.add(key);
        await this.ctx.nonces.claimRecycled(op.from, missing);
        await this.fill(op.from, missing);
      }
      await this.patch(op, { pendingSince: head });
      return;
    }
    if (latest > nonce) {
      // Receipts read after the nonce: if none of ours is mined now, the nonce went to another transaction.
      if ((await this.receiptsOf([op])).size > 0) return;
      return this.resignAtNewNonce(op);
    }
    return this.replace(op, head);
  }

  /** Replaces the current transaction at the same nonce with fees ≥ +12.5% and ≥ the quote, capped. */
  private async replace(op: Operation, head: number): Promise<void> {
    const signer = await this.signerOf(op);
    if (!signer) return;
    const fees = await this.ctx.chain.fees.bump(feesOf(currentTransaction(op)!));
    if (!fees) {
      this.warnOnce(op, "fee-cap", "MAX_FEE_PER_GAS leaves no room to replace a stuck transaction; waiting");
      await this.patch(op, { pendingSince: head });
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
    if (outcome.kind === "accepted" || outcome.kind === "lost") {
      const sent = op.transactions.map((tx) => (tx.hash === replacement.hash ? replacement : tx));
      await this.patch(op, { transactions: sent, pendingSince: head });
    } else {
      // Refused: it never entered a mempool, so it is not one of the operation's transactions.
      await this.patch(op, { transactions: withoutHash(op.transactions, replacement.hash), pendingSince: head });
    }
  }

  private async resignAtNewNonce(op: Operation): Promise<void> {
    const signer = await this.signerOf(op);
    if (!signer) return;
    const nonce = await this.engine.takeNonce(op.from);
    const tx = await signCall(signer, this.ctx.options.chainId, nonce, op.call!, await this.ctx.chain.fees.quote(true));
    this.ctx.logger.warn(
      { operationId: op.id, from: op.nonce, to: nonce },
      "nonce used by another transaction: re-signed",
    );
    await this.patch(op, {
      nonce,
      contractAddress: targetAddress(op.from, op.call!, nonce),
      transactions: [...op.transactions, tx],
      pendingSince: null,
    });
    await broadcast(this.ctx.chain.rpc, tx.raw, nonce);
  }

  /** Gives up an operation the node refuses for good; its nonce is filled so later ones can be mined. */
  private async abandon(op: Operation, reason: string): Promise<void> {
    const error = new ApiError("TRANSACTION_ABANDONED", `The service gave up this transaction: ${reason}`);
    op.status = "failed";
    op.error = { code: "TRANSACTION_ABANDONED", message: error.message };
    op.response = { status: error.status, body: JSON.stringify(errorBody(error, op.id)) };
    await this.ctx.store.update(op.id, { status: op.status, error: op.error, response: op.response });
    await this.ctx.nonces.recycle(op.from, op.nonce!);
    this.ctx.logger.warn({ operationId: op.id, nonce: op.nonce }, "operation abandoned; its nonce will be filled");
    this.finish(op);
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
      const blocked = [...this.tracked.values()].some((op) => op.from === address && (op.nonce ?? -1) > nonce);
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
    const op = this.engine.newOperation(
      { operation: "nonceFill", signer, context: {}, fingerprint: "nonceFill" },
      null,
    );
    op.call = { to: address, data: "0x", value: 0n, gasLimit: TRANSFER_GAS };
    op.nonce = nonce;
    op.transactions = [
      await signCall(signer, this.ctx.options.chainId, nonce, op.call, await this.ctx.chain.fees.quote(true)),
    ];
    await this.engine.insert(op);
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

  /** Applies `patch` (or a receipt's block) to the operation in memory and in the store. */
  private async patch(op: Operation, patch: OperationPatch | Receipt): Promise<void> {
    const changes: OperationPatch =
      "gasUsed" in patch ? { blockNumber: patch.blockNumber, blockHash: patch.blockHash } : patch;
    Object.assign(op, changes);
    if (changes.pendingSince !== undefined) this.pendingSinceMs.set(op.id, Date.now());
    await this.ctx.store.update(op.id, changes);
  }

  private warnOnce(op: Pick<Operation, "id">, what: string, message: string): void {
    const key = `${op.id}:${what}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.ctx.logger.warn({ operationId: op.id }, message);
  }
}

/** See Follower.stillMined. */
function minedVerdict(op: Operation, block: RpcAnswer, txs: RpcAnswer[]): MinedVerdict {
  const blockHash = op.blockHash?.toLowerCase();
  let blockSays: "same" | "other" | "missing" | "unknown" = "unknown";
  if ("result" in block) {
    const found = block.result as { hash?: string } | null;
    if (found === null) blockSays = "missing";
    else if (typeof found.hash === "string") blockSays = found.hash.toLowerCase() === blockHash ? "same" : "other";
  }
  if (blockSays === "same") return "mined";
  if (blockSays === "other") return "reorged";
  const where = txs.map((answer) => {
    if (!("result" in answer)) return "unknown";
    const tx = answer.result as { blockHash?: string | null } | null;
    if (tx === null) return "absent";
    if (!tx.blockHash) return "unmined";
    return tx.blockHash.toLowerCase() === blockHash ? "here" : "elsewhere";
  });
  if (where.includes("here")) return "mined";
  if (where.includes("elsewhere") || where.includes("unmined")) return "reorged";
  if (blockSays === "missing" && where.length > 0 && where.every((w) => w === "absent")) return "reorged";
  return "unknown";
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
