import type { AttemptRecord, CursorDelivery, CursorRecord, CursorRound } from "./outbox";

/**
 * PGlite's happy path (migration 9): the deliveries a worker read past the cursor, held in memory
 * until each is recorded, into the log (delivered, or failed for good) or the queue (to be tried
 * again, or waiting behind its order key). The cursor it persists never passes a delivery still
 * here, so whatever a crash loses from memory is read again by the next process.
 * The events of one order key (one operation's) are sent one after the other: a later one waits
 * here while an earlier one is in flight, and goes to the queue behind it when that one fails.
 */
export class DeliveryCursor {
  /** The last event read. */
  private head: number;
  /** The cursor in the store. */
  private persisted: number;
  /** Up to here an earlier process may have read: the store leaves out what it logged or queued. */
  private readonly recheck: number;
  /** Deliveries read and not recorded, per event seq, in seq order (a Map keeps insertion order). */
  private readonly unresolved = new Map<number, number>();
  /** Per order key with a delivery in memory: the later ones waiting behind it. */
  private readonly waiting = new Map<string, CursorDelivery[]>();
  private records: CursorRecord[] = [];

  constructor(start: { cursor: number; top: number }) {
    this.head = start.cursor;
    this.persisted = start.cursor;
    this.recheck = start.top;
  }

  /** Where the cursor may go: just before the first delivery not recorded, else the last event read. */
  private position(): number {
    for (const seq of this.unresolved.keys()) return seq - 1;
    return this.head;
  }

  /** Whether a round has something to write even with nothing else to do. */
  get hasWrites(): boolean {
    return this.records.length > 0 || this.position() > this.persisted;
  }

  /** The last event read: an idle worker asks whether one was written past it. */
  get after(): number {
    return this.head;
  }

  /** The cursor's part of the next round, reading at most `limit` events; its records go with it. */
  next(limit: number): CursorRound {
    const position = this.position();
    const round: CursorRound = { records: this.records, after: this.head, limit, recheck: this.recheck };
    if (position > this.persisted) round.cursor = position;
    this.records = [];
    return round;
  }

  /** The round was written: what it read is the worker's to sort with take(). */
  written(round: CursorRound, last: number | null): void {
    if (round.cursor !== undefined) this.persisted = round.cursor;
    if (last !== null) this.head = Math.max(this.head, last);
  }

  /** The round failed: its records go with the next one (nothing of it was written). */
  failed(round: CursorRound): void {
    this.records = round.records.concat(this.records);
  }

  /** For a clean stop: the records and the cursor, written once more. */
  final(): Pick<CursorRound, "records" | "cursor"> | null {
    if (!this.hasWrites) return null;
    const { records, cursor } = this.next(0);
    return { records, cursor };
  }

  /**
   * Sorts what a round read (in seq order), handing those to send now to `start` one by one. One
   * behind a delivery of its order key in memory waits for it; one that cannot be sent from memory
   * (its endpoint is disabled, an earlier one of its key is in the queue, its endpoint `full`, which
   * counts those started before it) goes to the queue.
   */
  take(read: CursorDelivery[], full: (endpointId: string) => boolean, start: (delivery: CursorDelivery) => void): void {
    const queued = new Set<string>();
    for (const delivery of read) {
      const seq = Number(delivery.eventSeq);
      this.unresolved.set(seq, (this.unresolved.get(seq) ?? 0) + 1);
      const key = delivery.orderKey;
      const behind = key === null ? undefined : this.waiting.get(key);
      if (behind) behind.push(delivery);
      else if (!delivery.enabled || delivery.behind || (key !== null && queued.has(key)) || full(delivery.endpointId)) {
        if (key !== null) queued.add(key);
        this.toQueue(delivery);
      } else {
        if (key !== null) this.waiting.set(key, []);
        start(delivery);
      }
    }
  }

  /**
   * An attempt ended (`gone`: 410, its endpoint disabled now): recorded with the next round, unless
   * `written` already. Answers the next of its order key to send now, if the attempt ended the
   * delivery; else those waiting go to the queue behind it.
   */
  attempted(
    delivery: CursorDelivery,
    record: AttemptRecord,
    gone: boolean,
    written = false,
  ): CursorDelivery | undefined {
    if (written) this.resolve(delivery.eventSeq);
    else this.record(attemptRecord(delivery, record));
    const key = delivery.orderKey;
    const waiting = key === null ? undefined : this.waiting.get(key);
    if (key === null || !waiting) return undefined;
    if ((record.delivered || record.final) && !gone) {
      const next = waiting.shift();
      if (!next) this.waiting.delete(key);
      return next;
    }
    this.queueWaiting(key);
    return undefined;
  }

  /** An attempt that could not be made (the store failed it): to the queue, due now, those behind it too. */
  dropped(delivery: CursorDelivery): void {
    this.toQueue(delivery);
    if (delivery.orderKey !== null) this.queueWaiting(delivery.orderKey);
  }

  /** Those waiting behind `key` in memory go to the queue, in order, behind the one before them. */
  private queueWaiting(key: string): void {
    for (const later of this.waiting.get(key) ?? []) this.toQueue(later);
    this.waiting.delete(key);
  }

  private toQueue(delivery: CursorDelivery): void {
    this.record({ ...recordOf(delivery), entry: null });
  }

  private record(record: CursorRecord): void {
    this.records.push(record);
    this.resolve(record.eventSeq);
  }

  private resolve(eventSeq: string): void {
    const seq = Number(eventSeq);
    const left = (this.unresolved.get(seq) ?? 1) - 1;
    if (left > 0) this.unresolved.set(seq, left);
    else this.unresolved.delete(seq);
  }
}

/** What the store records of an attempt at a delivery read past the cursor. */
export function attemptRecord(delivery: CursorDelivery, record: AttemptRecord): CursorRecord {
  return {
    ...recordOf(delivery),
    entry: record.entry,
    delivered: record.delivered,
    final: record.final,
    retryMs: record.retryInMs,
    windowMs: record.retryWindowMs,
  };
}

function recordOf(
  delivery: CursorDelivery,
): Pick<CursorRecord, "endpointId" | "eventSeq" | "orderKey" | "createdAt" | "type"> {
  return {
    type: delivery.type,
    endpointId: delivery.endpointId,
    eventSeq: delivery.eventSeq,
    orderKey: delivery.orderKey,
    createdAt: delivery.createdAt.toISOString(),
  };
}
