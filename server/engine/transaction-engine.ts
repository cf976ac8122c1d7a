import { randomUUID } from "node:crypto";
import type { TransactionSigner } from "../signers/signer";
import type { Fees } from "../chain/fee-oracle";
import { parseReceipt } from "../chain/receipt";
import { ApiError, errorBody } from "../http/errors";
import { broadcast } from "./broadcast";
import type { EngineContext, RequestPath, SpendRefund } from "./context";
import { Follower } from "./follower";
import { IdempotencyKeyTaken, NonceTaken, NotAwaitingApproval, type ApprovalDecision } from "./operation-store";
import { currentTransaction, type Operation } from "./operation";
import type { NonceSeed } from "./nonce-allocator";
import { mayStartAgainAt, NonceHolders, seedOf } from "./nonce-holders";
import { signCall, targetAddress } from "./signing";
import { pendingBody, unchangedBody } from "./write-response";

/** A write a route asks for: the call and what the answer needs besides the receipt. */
export interface WriteRequest {
  operation: string;
  signer: TransactionSigner;
  /** Unset for a deployment. */
  to?: string;
  data: string;
  value?: bigint;
  /** Response fields known now (the price paid, the receiver, …), stored with the operation. */
  context: Record<string, unknown>;
  fingerprint: string;
  idempotencyKey?: string;
  /** The access key that asks for it ("root" for API_KEY); null or unset for a request key in open mode. */
  accessKeyId?: string | null;
  /** "mcp" when an MCP tool asks for it (GET /nft/operations shows it). */
  via?: string | null;
}

/** An answer to send as it is: replays must match the first answer byte for byte. */
export interface WriteAnswer {
  status: number;
  body: string;
  replayed: boolean;
  /** Held by its key's approval rule (202 awaiting_approval): nothing was signed or sent. */
  held?: boolean;
}

/** How often an in-request broadcast is tried again after a nonce refusal before the follower takes over. */
const MAX_BROADCAST_ATTEMPTS = 6;
/** Nonces a write or a re-sign takes at most, when the store says another operation holds each (see NonceHolders). */
const MAX_NONCE_TAKES = 5;
/** How long a broadcast refused for a gap below it waits, within the request, for the gap to close. */
const GAP_WAIT_MS = 10_000;
/** At most this long a first broadcast waits for this process's lower nonces to be answered (gapsRefused). */
const ORDERED_SEND_WAIT_MS = 1_000;
/** How long a nonce seed read ahead (during the simulation) may stand in for a fresh read. */
const SEED_AHEAD_MS = 2_000;
/** Free nonces (gaps below a held one) handed out again at most, per address and seed. */
const MAX_FREE_AT_SEED = 1_000;
/** A steady block interval at least this long is a chain with block time, not one that mines on demand. */
const STEADY_BLOCKS_MS = 250;
/** Addresses remembered as seeded in this process, at most. */
const MAX_SEEDED = 10_000;

/**
 * The one write path of every /nft write: record → sign → broadcast → wait. Each write becomes an
 * operation in the store before its transaction is broadcast; nonces are taken at signing time,
 * so concurrent writes of one key are signed and broadcast concurrently; the follower carries on
 * with whatever is unfinished when the request stops waiting.
 */
export class TransactionEngine implements RequestPath {
  readonly follower: Follower;
  /** Who holds each nonce of this chain now (see NonceHolders): the one place that says so. */
  private readonly holders: NonceHolders;
  /** Operations whose request is still running in this process (from its record to its answer). */
  private readonly inRequest = new Set<string>();
  /** Addresses whose nonces this process has taken: their next take needs no seed. */
  private readonly seeded = new Set<string>();
  /** Seeds read while their first write simulates, by address. */
  private readonly seedsAhead = new Map<string, { at: number; seed: Promise<NonceSeed> }>();
  /** Writes of each address between their start and their nonce. */
  private readonly beforeNonce = new Map<string, number>();
  /** "address:Idempotency-Key" of the keyed writes this process is sending, from before their nonce to their answer. */
  private readonly keysInFlight = new Map<string, string>(); // to the fingerprint of its body
  /**
   * Held operations this process is sending once approved, with what records their decision: their
   * row is resumed (the decision in that transaction), not inserted, and failed, not forgotten.
   */
  private readonly approved = new Map<string, ApprovalDecision>();
  private immediateMisses = 0;
  private skippedChecks = 0;
  /** The node refused a nonce above its next one: it takes no gaps, so first broadcasts go out in nonce order. */
  private gapsRefused = false;

  constructor(private readonly ctx: EngineContext) {
    this.holders = new NonceHolders((address, below) => ctx.store.heldNonces(this.chainId, address, below));
    this.follower = new Follower(ctx, this);
  }

  start(): void {
    this.follower.start();
  }

  /** Whether this process's request path still holds `id` (before or in its first broadcast): not the follower's yet. */
  isBeingSent(id: string): boolean {
    return this.holders.has(id);
  }

  /** Whether a request of this process is still working on `id`: the follower must not take it up from the store. */
  isInRequest(id: string): boolean {
    return this.inRequest.has(id);
  }

  /** The operations requests of this process are still working on. */
  requestsInFlight(): Iterable<string> {
    return this.inRequest.keys();
  }

  /** The operation with this id, if any. */
  find(id: string): Promise<Operation | null> {
    return /^[0-9a-f-]{36}$/.test(id) ? this.ctx.store.find(id) : Promise.resolve(null);
  }

  async stop(): Promise<void> {
    await this.follower.stop();
  }

  /**
   * The answer an Idempotency-Key already has, or null when the key is new. 422 for another body,
   * 409 while the first request is still before its broadcast.
   */
  async replay(from: string, key: string, fingerprint: string): Promise<WriteAnswer | null> {
    const op = await this.ctx.store.findByIdempotencyKey(this.chainId, from, key);
    if (!op) return null;
    if (op.fingerprint !== fingerprint) throw keyReused();
    if (op.status === "queued") throw keyInUse();
    if (op.status === "awaiting_approval") return { ...op.response!, replayed: true, held: true };
    if (op.response) return { ...op.response, replayed: true };
    return { status: 202, body: pendingBody(op), replayed: true };
  }

  /** Records a write that needed no transaction (a setting already in force): it answers at once. */
  async recordUnchanged(request: Omit<WriteRequest, "to" | "data" | "value">, contractAddress: string) {
    const op = this.newOperation(request, contractAddress);
    const body = unchangedBody(op, request.context);
    op.status = "confirmed";
    op.final = true; // no transaction: nothing a reorg could undo
    op.result = { ...request.context, changed: false };
    op.response = { status: 200, body };
    await this.insert(op);
    return { status: 200, body, replayed: false };
  }

  /**
   * What a write would do, sending nothing and recording nothing (`?dryRun=true`, the MCP tools'
   * plans): the call, its gas (with the margin a send adds), the fee quote, and its cost in wei at most.
   */
  async preview(request: Pick<WriteRequest, "signer" | "to" | "data" | "value">) {
    const from = request.signer.address;
    const [gasLimit, fees] = await Promise.all([
      this.ctx.chain.simulate({ from, to: request.to, data: request.data, value: request.value }),
      this.ctx.chain.fees.quote(),
    ]);
    const value = request.value ?? 0n;
    const maxFeePerGas = fees.type === 2 ? fees.maxFeePerGas : fees.gasPrice;
    return {
      call: { from, to: request.to ?? null, data: request.data, value: value.toString() },
      gas: gasLimit.toString(),
      maxFeePerGas: maxFeePerGas.toString(),
      costWei: spendOf({ value, gasLimit }, fees).toString(),
    };
  }

  /**
   * A write held for approval: simulated as a send would be (a refusal throws its API error), then
   * built as an `awaiting_approval` operation with its call and gas, no nonce, nothing signed. The
   * caller records it (insertHeldIn) in the transaction that records its approval.
   */
  async planHold(request: WriteRequest): Promise<Operation> {
    const from = request.signer.address;
    const gasLimit = await this.ctx.chain.simulate({ from, to: request.to, data: request.data, value: request.value });
    const op = this.newOperation(request, request.to ?? null);
    op.status = "awaiting_approval";
    op.final = true; // the follower leaves it alone until it is approved
    op.call = { to: request.to ?? null, data: request.data, value: request.value ?? 0n, gasLimit };
    return op;
  }

  /**
   * Sends a held operation once approved, as if its write had just arrived: simulated again, then
   * nonce, sign, broadcast and wait. `decide` records the approval, in the transaction that turns
   * the held row into a queued one holding its nonce and signed transaction, or into a failed one
   * when the simulation refuses it (its error is thrown). A crash before that transaction leaves
   * the approval pending; after it, the follower sends the queued row by itself: never approved and
   * unsent, nor sent twice. Two approvals send one transaction: the second throws NotAwaitingApproval.
   */
  async sendApproved(held: Operation, signer: TransactionSigner, decide: ApprovalDecision): Promise<WriteAnswer> {
    if (held.status !== "awaiting_approval" || !held.call || this.approved.has(held.id))
      throw new NotAwaitingApproval(held.id);
    const request: WriteRequest = {
      operation: held.operation,
      signer,
      to: held.call.to ?? undefined,
      data: held.call.data,
      value: held.call.value,
      context: held.context,
      fingerprint: held.fingerprint,
      idempotencyKey: held.idempotencyKey ?? undefined,
      accessKeyId: held.accessKeyId,
      via: held.via,
    };
    this.approved.set(held.id, decide);
    try {
      const taken = await this.simulateAndTakeNonce(request, held.id).catch(async (err: unknown) => {
        if (err instanceof ApiError) await this.ctx.store.failApproved(held.id, err, decide);
        throw err;
      });
      const op: Operation = {
        ...held,
        status: "queued",
        final: false,
        response: null,
        call: taken.call,
        nonce: taken.nonce,
        contractAddress: targetAddress(signer.address, taken.call, taken.nonce) ?? held.contractAddress,
      };
      this.inRequest.add(op.id);
      try {
        return await this.send(request, op, taken.fees, taken.refund);
      } finally {
        this.inRequest.delete(op.id);
      }
    } finally {
      this.approved.delete(held.id);
    }
  }

  /** Simulates, records, signs, broadcasts and waits for `request`; see the class comment. */
  async submit(request: WriteRequest): Promise<WriteAnswer> {
    if (!request.idempotencyKey) return this.submitOnce(request);
    // A repeat of a key this process is still sending (a client retrying at once) is answered as a
    // replay before it takes a nonce. Taken and given back, that nonce left a gap below the first
    // one's: on a chain that refuses gaps it waited, answered 202 and cost a 0-value fill.
    const slot = `${request.signer.address}:${request.idempotencyKey}`;
    const first = this.keysInFlight.get(slot);
    if (first !== undefined) {
      if (first !== request.fingerprint) throw keyReused();
      const answer = await this.replay(request.signer.address, request.idempotencyKey, request.fingerprint);
      if (answer) return answer;
      throw keyInUse();
    }
    this.keysInFlight.set(slot, request.fingerprint);
    try {
      return await this.submitOnce(request);
    } finally {
      this.keysInFlight.delete(slot);
    }
  }

  private async submitOnce(request: WriteRequest): Promise<WriteAnswer> {
    const { signer } = request;
    this.ctx.metrics?.setSignerPoolSize(this.ctx.chain.signers.size);
    const id = randomUUID();
    const { call, fees, nonce, refund } = await this.simulateAndTakeNonce(request, id);
    this.crashIfAt("nonce-taken");
    const op = this.newOperation(request, targetAddress(signer.address, call, nonce), id);
    op.call = call;
    op.nonce = nonce;
    this.inRequest.add(op.id);
    try {
      return await this.send(request, op, fees, refund);
    } finally {
      this.inRequest.delete(op.id);
    }
  }

  /**
   * Simulates a write (with a fee quote), reserves its spend, then takes its nonce: a write the
   * simulation or a spend limit refuses takes none, and signs and stores nothing.
   */
  private async simulateAndTakeNonce(request: WriteRequest, id: string) {
    const { signer } = request;
    const from = signer.address;
    const concurrent = (this.beforeNonce.get(from) ?? 0) + 1;
    this.beforeNonce.set(from, concurrent);
    try {
      if (concurrent === 2) this.readSeedAhead(from);
      const [gasLimit, fees] = await Promise.all([
        this.ctx.chain.simulate({ from, to: request.to, data: request.data, value: request.value }),
        this.ctx.chain.fees.quote(),
      ]);
      const call = { to: request.to ?? null, data: request.data, value: request.value ?? 0n, gasLimit };
      const refund = (await this.ctx.spendGuard?.reserve(signer, spendOf(call, fees))) ?? noRefund;
      const nonce = await this.takeNonceFor(id, from).catch(async (err: unknown) => {
        await refund();
        throw err;
      });
      return { call, fees, nonce, refund };
    } finally {
      const left = this.beforeNonce.get(from)! - 1;
      if (left === 0) this.beforeNonce.delete(from);
      else this.beforeNonce.set(from, left);
    }
  }

  /** Signs, records, broadcasts and waits for a new operation holding its nonce. */
  private async send(request: WriteRequest, op: Operation, fees: Fees, refund: SpendRefund): Promise<WriteAnswer> {
    const { signer } = request;
    const call = op.call!;
    this.holders.hold(op.id, signer.address, op.nonce!);
    let accepted: boolean;
    /** The follower's pass head before the broadcast: see Follower.track. */
    let passHead: number | undefined;
    try {
      try {
        for (let take = 1; ; take++) {
          op.transactions = [await signCall(signer, this.ctx.options.chainId, op.nonce!, call, fees)];
          try {
            const decide = this.approved.get(op.id);
            if (decide) await this.resumeLeased(op, decide);
            else await this.insert(op);
            break;
          } catch (err) {
            // Another operation holds this nonce (or this very transaction): it is not ours to give back.
            if (!(err instanceof NonceTaken) || take >= MAX_NONCE_TAKES) throw err;
            op.nonce = await this.takeNonceFor(op.id, signer.address);
            op.contractAddress = targetAddress(signer.address, call, op.nonce);
          }
        }
        if (this.approved.has(op.id)) this.crashIfAt("approved");
        this.crashIfAt("row-stored");
      } catch (err) {
        // Nothing was sent: the nonce and the spend go back (unless the store says another holds it).
        if (!(err instanceof NonceTaken)) await this.ctx.nonces.recycle(signer.address, op.nonce!);
        await refund();
        if (err instanceof IdempotencyKeyTaken && request.idempotencyKey) {
          const answer = await this.replay(signer.address, request.idempotencyKey, request.fingerprint);
          if (answer) return answer;
        }
        throw err;
      }
      passHead = this.follower.passHead;
      accepted = await this.broadcastFirst(op, signer, refund);
      this.crashIfAt("broadcast");
    } finally {
      this.holders.release(op.id);
    }
    op.status = "sent";
    await this.ctx.store.update(op.id, { status: "sent" });
    this.ctx.metrics?.operationStatus("sent");

    if (!accepted) {
      // The answer was lost: the transaction may be in the mempool. Say so now, with its hash.
      this.follower.track(op);
      return { status: 202, body: pendingBody(op), replayed: false };
    }
    if (this.ctx.options.confirmations === 1 && this.expectReceiptAtOnce()) {
      // An automining chain has the receipt already: ask once before waiting on blocks.
      const receipt = await this.ctx.chain.rpc.queue("eth_getTransactionReceipt", [currentTransaction(op)!.hash]).then(
        (answer) => ("result" in answer ? parseReceipt(answer.result) : null),
        () => null,
      );
      this.immediateMisses = receipt ? 0 : this.immediateMisses + 1;
      if (receipt) {
        // Its block holds this transaction alone, most likely: proven, the index needs no eth_getLogs of it.
        this.ctx.blocks.own.prove([{ receipt, raw: currentTransaction(op)!.raw }]);
        const settled = await this.follower.settle(op, receipt);
        if (settled.response) return { ...settled.response, replayed: false };
      }
    }
    this.follower.track(op, passHead);
    const final = await this.follower.waitFor(op.id, this.ctx.options.txTimeoutMs);
    if (final?.response) return { ...final.response, replayed: false };
    return { status: 202, body: pendingBody(final ?? op), replayed: false };
  }

  /**
   * Whether to ask for the receipt right after the broadcast: worth a call on an automining chain,
   * wasted on one with block times. After two misses in a row, only every 16th write asks again.
   */
  /** The follower found a write's receipt before any new block: ask at once again. */
  receiptWasThereAtOnce(): void {
    this.immediateMisses = 0;
  }

  private expectReceiptAtOnce(): boolean {
    // A chain that makes blocks at a steady pace has no receipt before its next block: the follower
    // reads it when the block comes (a found receipt would tell it nothing about automining).
    const interval = this.ctx.blocks.interval;
    if (interval !== undefined && interval >= STEADY_BLOCKS_MS) return false;
    if (this.immediateMisses < 2) return true;
    return ++this.skippedChecks % 16 === 0;
  }

  /**
   * Broadcasts a new operation's transaction. True when the node took it, false when its answer
   * was lost (it may be in the mempool: the follower finds out). A refusal that proves the
   * transaction is not in the mempool either re-signs it (nonce conflicts) or forgets the
   * operation, gives its nonce back and throws the refusal's API error.
   */
  private async broadcastFirst(op: Operation, signer: TransactionSigner, refund: SpendRefund): Promise<boolean> {
    const deadline = Date.now() + Math.min(this.ctx.options.txTimeoutMs, GAP_WAIT_MS);
    // A node that refused a gap once (an automining one) is sent this process's nonces one after
    // the other, each once the lower one is answered. Sent at once, a write was refused (a hardhat
    // node takes a batch's calls in any order), waited for the lower one, and cost a second send.
    if (this.gapsRefused) await this.holders.lowerReleased(op.from, op.nonce!, ORDERED_SEND_WAIT_MS);
    for (let attempt = 1; ; attempt++) {
      // The resend guard has its say over the first broadcast too: a cancelled job's batch never goes out.
      const send = () => broadcast(this.ctx.chain.rpc, currentTransaction(op)!.raw, op.nonce!);
      const outcome = this.ctx.resendGuard ? await this.ctx.resendGuard.sendAgain(op, send) : await send();
      if (outcome === "withdrawn")
        return this.giveUpUnsent(
          op,
          new ApiError("TRANSACTION_ABANDONED", "Withdrawn before its first broadcast (its job was cancelled)"),
          refund,
        );
      switch (outcome.kind) {
        case "accepted":
          return true;
        case "lost":
          this.ctx.logger.warn(
            { operationId: op.id, nonce: op.nonce, reason: outcome.reason },
            "broadcast answer lost; answering 202",
          );
          return false;
        case "nonceTooLow":
        case "replacementUnderpriced":
          // The nonce is used, or another transaction holds it in the mempool: ours can never be
          // mined at it, so a new nonce is safe. Skip past what the chain has.
          if (attempt >= MAX_BROADCAST_ATTEMPTS) return false;
          await this.ctx.nonces.raiseTo(op.from, await this.ctx.chain.transactionCount(op.from, "pending"));
          await this.resignAtNewNonce(op, signer);
          break;
        case "underpriced":
          // Below the next block's base fee (a node that refuses rather than queues): a fresh quote
          // at the same nonce, unless MAX_FEE_PER_GAS keeps us under it.
          if (attempt < 3) {
            await this.resignAtSameNonce(op, signer);
            break;
          }
          await this.giveUpUnsent(
            op,
            new ApiError(
              "CHAIN_UNAVAILABLE",
              "The chain's fees are above what this service may pay (MAX_FEE_PER_GAS); retry later",
            ),
            refund,
          );
          break;
        case "nonceTooHigh":
          // A node that refuses gaps (an automining one) saw this nonce before a lower one still on
          // its way: wait for this process's lower ones, then try the same transaction again.
          this.gapsRefused = true;
          if (await this.holders.lowerReleased(op.from, op.nonce!)) break;
          {
            // Nothing of ours from the chain's nonce up but this one (recorded, or being sent here):
            // the chain is behind our counter (a reset dev chain, or nonces taken by a process killed
            // before it recorded them). Start again there, unless a nonce was handed out after ours.
            // With any other of ours above the chain, a lower counter would hand its nonce out again;
            // the gap is then the follower's to fill.
            const pending = await this.ctx.chain.transactionCount(op.from, "pending");
            const others = await this.holders.heldNonces(op.from, { except: { id: op.id, nonce: op.nonce! } });
            if (mayStartAgainAt(pending, others) && (await this.ctx.nonces.resetTo(op.from, pending, op.nonce! + 1))) {
              await this.resignAtNewNonce(op, signer);
              break;
            }
          }
          // Lower ones of another process on their way, or refused ones the follower sends again.
          if (Date.now() > deadline) return false;
          await sleep(50);
          break;
        case "unreachable":
          await this.giveUpUnsent(op, outcome.error, refund);
          break;
        case "refused":
          await this.giveUpUnsent(
            op,
            outcome.error.code === "INSUFFICIENT_FUNDS"
              ? await this.ctx.chain.insufficientFunds(op.from, { spend: signedSpend(op) })
              : outcome.error,
            refund,
          );
      }
    }
  }

  /** Forgets an operation whose transaction never entered a mempool, gives its nonce back and throws `error`. */
  private async giveUpUnsent(op: Operation, error: ApiError, refund: SpendRefund): Promise<never> {
    // An approved write keeps its row (its approval names it): failed, where a new one is forgotten.
    if (this.approved.has(op.id))
      await this.ctx.store.update(op.id, {
        status: "failed",
        error: { code: error.code, message: error.message },
        response: { status: error.status, body: JSON.stringify(errorBody(error, op.id)) },
        final: true,
      });
    else await this.ctx.store.delete(op.id);
    await this.ctx.nonces.recycle(op.from, op.nonce!);
    await refund();
    this.ctx.logger.info(
      { operationId: op.id, nonce: op.nonce, code: error.code },
      "broadcast refused; nonce recycled",
    );
    throw error;
  }

  private async resignAtSameNonce(op: Operation, signer: TransactionSigner): Promise<void> {
    const fees = await this.ctx.chain.fees.quote(true);
    op.transactions = [await signCall(signer, this.ctx.options.chainId, op.nonce!, op.call!, fees)];
    await this.ctx.store.update(op.id, { transactions: op.transactions });
  }

  private async resignAtNewNonce(op: Operation, signer: TransactionSigner): Promise<void> {
    for (let take = 1; ; take++) {
      const nonce = await this.takeNonceFor(op.id, op.from);
      await this.crashPoint("resign-nonce-taken");
      const fees = await this.ctx.chain.fees.quote();
      const contractAddress = targetAddress(op.from, op.call!, nonce);
      // The refused transaction never entered a mempool: it is not one of the operation's hashes.
      const transactions = [await signCall(signer, this.ctx.options.chainId, nonce, op.call!, fees)];
      try {
        await this.ctx.store.update(op.id, { nonce, contractAddress, transactions });
      } catch (err) {
        if (!(err instanceof NonceTaken) || take >= MAX_NONCE_TAKES) throw err;
        continue; // another operation holds it: not ours to give back
      }
      Object.assign(op, { nonce, contractAddress, transactions });
      return;
    }
  }

  /**
   * Takes the next nonce of `from` for operation `id` and holds it there (NonceHolders) until its
   * holder releases it, once the store records it and its transaction is broadcast: a new write,
   * a re-sign, or the follower's re-sign.
   */
  async takeNonceFor(id: string, from: string): Promise<number> {
    const nonce = await this.takeNonce(from);
    this.holders.hold(id, from, nonce);
    return nonce;
  }

  /** Holds `nonce` of `from` for `id` (a nonce fill's, chosen by the follower), until released. */
  holdNonce(id: string, from: string, nonce: number): void {
    this.holders.hold(id, from, nonce);
  }

  /** Ends `id`'s hold of a nonce taken with takeNonceFor or holdNonce. */
  releaseNonce(id: string): void {
    this.holders.release(id);
  }

  /** Every nonce of `from` held now (below `below`), by a row or by a take of this process not yet recorded. */
  heldNonces(from: string, below?: number): Promise<number[]> {
    return this.holders.heldNonces(from, { below });
  }

  /** Tests only (CRASH_AT): dies here with SIGKILL, leaving the store and the chain as a crash would. */
  private crashIfAt(step: NonNullable<EngineContext["options"]["crashAt"]>): void {
    if (this.ctx.options.crashAt === step) process.kill(process.pid, "SIGKILL");
  }

  private pausedOnce = false;

  /** Tests only: CRASH_AT's step, where the process dies, or stalls once for CRASH_PAUSE_MS (a slow process). */
  async crashPoint(step: NonNullable<EngineContext["options"]["crashAt"]>): Promise<void> {
    if (this.ctx.options.crashAt !== step) return;
    if (this.ctx.options.crashPauseMs === undefined) return this.crashIfAt(step);
    if (this.pausedOnce) return;
    this.pausedOnce = true;
    this.ctx.logger.warn({ step, ms: this.ctx.options.crashPauseMs }, "paused at crash point");
    await sleep(this.ctx.options.crashPauseMs);
  }

  /** The next nonce of `from`: seeded from the chain's pending count and our unfinished operations. */
  async takeNonce(from: string): Promise<number> {
    this.ctx.metrics?.nonceAllocated();
    const nonce = await this.ctx.nonces.take(from, () => {
      const ahead = this.seedsAhead.get(from);
      this.seedsAhead.delete(from);
      return ahead && Date.now() - ahead.at < SEED_AHEAD_MS ? ahead.seed : this.readSeed(from);
    });
    if (this.seeded.size >= MAX_SEEDED) this.seeded.clear();
    this.seeded.add(from);
    return nonce;
  }

  /**
   * Concurrent writes of a key this process has not signed for yet (a burst from a new key): its
   * nonce seed is read while they simulate, so that it costs no round trip of its own and the
   * burst reaches its first block sooner. A lone write reads it when it takes its nonce, as before.
   */
  private readSeedAhead(from: string): void {
    if (this.seeded.has(from) || this.seedsAhead.has(from)) return;
    const entry = { at: Date.now(), seed: this.readSeed(from) };
    const forget = () => {
      if (this.seedsAhead.get(from) === entry) this.seedsAhead.delete(from);
    };
    entry.seed.catch(forget); // a failed read is not served: takeNonce reads again
    setTimeout(forget, SEED_AHEAD_MS).unref();
    this.seedsAhead.set(from, entry);
  }

  /**
   * Where `from` starts: past the chain's pending count and every nonce an unfinished operation
   * holds; the nonces in between that none holds are free (a write killed between its nonce and its
   * record left them), so allocation comes back down to the lowest of them.
   */
  private async readSeed(from: string): Promise<NonceSeed> {
    const [pending, held] = await Promise.all([
      this.ctx.chain.transactionCount(from, "pending"),
      this.holders.heldNonces(from),
    ]);
    return seedOf(pending, held, MAX_FREE_AT_SEED);
  }

  newOperation(
    request: Pick<
      WriteRequest,
      "operation" | "signer" | "context" | "fingerprint" | "idempotencyKey" | "accessKeyId" | "via"
    >,
    contractAddress: string | null,
    id: string = randomUUID(),
  ): Operation {
    const now = new Date();
    return {
      id,
      chainId: this.chainId,
      from: request.signer.address,
      operation: request.operation,
      contractAddress,
      fingerprint: request.fingerprint,
      idempotencyKey: request.idempotencyKey ?? null,
      status: "queued",
      nonce: null,
      call: null,
      transactions: [],
      context: request.context,
      result: null,
      error: null,
      response: null,
      blockNumber: null,
      blockHash: null,
      pendingSince: null,
      pendingSinceAt: null,
      final: false,
      reorgs: 0,
      accessKeyId: request.accessKeyId ?? null,
      via: request.via ?? null,
      createdAt: now,
      updatedAt: now,
    };
  }

  async insert(op: Operation): Promise<void> {
    await this.insertLeased(op);
    this.ctx.metrics?.operationStatus(op.status);
  }

  /** An approved operation's row, from held to queued with its nonce and transaction (its decision with it), leased as an insert is. */
  private async resumeLeased(op: Operation, decide: ApprovalDecision): Promise<void> {
    await this.ctx.store.resumeApproved(
      op,
      { owner: this.ctx.owner, ms: this.ctx.options.txTimeoutMs + this.ctx.options.leaseMs },
      decide,
    );
    this.ctx.metrics?.operationStatus(op.status);
  }

  private insertLeased(op: Operation): Promise<void> {
    // Held by this process while its request waits, and a little longer: then anyone may follow it.
    return this.ctx.store.insert(op, {
      owner: this.ctx.owner,
      ms: this.ctx.options.txTimeoutMs + this.ctx.options.leaseMs,
    });
  }

  get chainId(): string {
    return this.ctx.options.chainId.toString();
  }
}

const noRefund: SpendRefund = async () => {};

/** What a write may cost its signer at most: its value plus all its gas at the signed max fee. */
/** What the operation's current transaction may cost its sender: value plus gas at the signed max fee. */
function signedSpend(op: Operation): bigint {
  const tx = currentTransaction(op)!;
  return op.call!.value + op.call!.gasLimit * BigInt(tx.maxFeePerGas ?? tx.gasPrice ?? 0);
}

function spendOf(call: { value: bigint; gasLimit: bigint }, fees: Fees): bigint {
  return call.value + call.gasLimit * (fees.type === 2 ? fees.maxFeePerGas : fees.gasPrice);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** 409: the first request with this Idempotency-Key has not been sent yet. */
function keyInUse(): ApiError {
  return new ApiError(
    "IDEMPOTENCY_KEY_IN_USE",
    "A request with this Idempotency-Key is still being sent; retry in a moment",
    undefined,
    { "Retry-After": "1" },
  );
}

/** 422: the Idempotency-Key was first used with another body. */
function keyReused(): ApiError {
  return new ApiError(
    "IDEMPOTENCY_KEY_REUSED",
    "This Idempotency-Key was used with a different request body; use a new key for a new request",
  );
}
