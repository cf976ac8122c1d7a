import { PassThrough } from "node:stream";
import type { AccessPrincipal } from "../access";
import type { Authenticator } from "../access/authenticator";
import { ApiError } from "../http/errors";
import { FINISHED, type JobProgress, type JobStore } from "./job-store";

export interface EventStreamLimits {
  /** Open streams per access key, at most (API.md: 10); past it, 429. */
  perKey: number;
  /** How long one stream lasts at most (API.md: 1 h); then it ends, and the client connects again. */
  lifetimeMs: number;
  /** How often a job's progress is read, once for all its streams (API.md: at most one event a second). */
  intervalMs: number;
  /** How often the keys of open streams are checked: a revoked or expired key's streams end within about twice this. */
  keyCheckMs: number;
}

export const EVENT_STREAM_LIMITS: EventStreamLimits = {
  perKey: 10,
  lifetimeMs: 60 * 60 * 1000,
  intervalMs: 1_000,
  keyCheckMs: 500,
};

interface Stream {
  out: PassThrough;
  jobId: string;
  /** The key's id, or "root" for API_KEY: the unit of the per-key cap. */
  key: string;
  secret: string;
  expiresAt: Date | null;
  events: number;
  last?: string;
  /** When its last event was written (ms). */
  lastAt: number;
  timer: NodeJS.Timeout;
  finalTimer?: NodeJS.Timeout;
}

interface Watched {
  streams: Set<Stream>;
  /** The progress last read, as an event's data, and whether the job had finished. */
  last?: { data: string; final: boolean };
  reading: boolean;
  /** The next read, an interval after the last one ended (as a stream's own loop would). */
  next?: NodeJS.Timeout;
}

/**
 * The Server-Sent Events streams of GET /jobs/{id}/events in this process: at most `perKey` open
 * per access key, each closed when its key is revoked or expires, and after `lifetimeMs`. A job's
 * progress is read once per interval for all its streams, whatever their number.
 */
export class JobEventStreams {
  private readonly byKey = new Map<string, Set<Stream>>();
  private readonly byJob = new Map<string, Watched>();
  private keyTimer?: NodeJS.Timeout;

  constructor(
    private readonly store: JobStore,
    private readonly authenticator: Authenticator,
    private readonly limits: EventStreamLimits = EVENT_STREAM_LIMITS,
  ) {}

  /** How many streams are open (all keys). */
  get size(): number {
    let n = 0;
    for (const streams of this.byKey.values()) n += streams.size;
    return n;
  }

  /** A new stream of `jobId`'s events for the key `secret` authenticated as `principal`; 429 past the key's cap. */
  open(jobId: string, principal: AccessPrincipal, secret: string): PassThrough {
    const key = principal.keyId ?? "root";
    const mine = this.byKey.get(key) ?? new Set<Stream>();
    if (mine.size >= this.limits.perKey)
      throw new ApiError(
        "RATE_LIMITED",
        `At most ${this.limits.perKey} event streams may be open at once per access key; close one first`,
        undefined,
        { "Retry-After": String(Math.ceil(this.limits.intervalMs / 1000)) },
      );
    const stream: Stream = {
      out: new PassThrough(),
      jobId,
      key,
      secret,
      expiresAt: principal.expiresAt,
      events: 0,
      lastAt: 0,
      timer: setTimeout(() => this.close(stream), this.limits.lifetimeMs).unref(),
    };
    this.byKey.set(key, mine.add(stream));
    let watched = this.byJob.get(jobId);
    if (!watched) this.byJob.set(jobId, (watched = { streams: new Set(), reading: false }));
    watched.streams.add(stream);
    if (watched.last) this.send(stream, watched.last);
    else void this.read(jobId, watched);
    this.startTimers();
    return stream.out;
  }

  /** Ends a stream (its client left, its key went, its time is up); idempotent. */
  close(stream: Stream): void {
    clearTimeout(stream.timer);
    clearTimeout(stream.finalTimer);
    const mine = this.byKey.get(stream.key);
    if (!mine?.delete(stream)) return;
    if (mine.size === 0) this.byKey.delete(stream.key);
    const watched = this.byJob.get(stream.jobId);
    watched?.streams.delete(stream);
    if (watched?.streams.size === 0) {
      clearTimeout(watched.next);
      this.byJob.delete(stream.jobId);
    }
    stream.out.end();
    if (this.byKey.size === 0) this.stopTimers();
  }

  /** Closes the stream whose output is `out` (the client's connection closed). */
  closeOutput(out: PassThrough): void {
    for (const streams of this.byKey.values())
      for (const stream of streams) if (stream.out === out) return this.close(stream);
  }

  private startTimers(): void {
    this.keyTimer ??= setInterval(() => void this.checkKeys(), this.limits.keyCheckMs).unref();
  }

  private stopTimers(): void {
    clearInterval(this.keyTimer);
    this.keyTimer = undefined;
  }

  /** One read of a job's progress for all its streams: an event to each stream it changed for, then the end if it finished. */
  private async read(jobId: string, watched: Watched): Promise<void> {
    if (watched.reading) return;
    watched.reading = true;
    let progress: JobProgress | null;
    try {
      progress = await this.store.progress(jobId);
    } catch {
      return; // a store hiccup: the next interval reads again
    } finally {
      watched.reading = false;
      if (this.byJob.get(jobId) === watched)
        watched.next = setTimeout(() => void this.read(jobId, watched), this.limits.intervalMs).unref();
    }
    if (!progress) {
      for (const stream of [...watched.streams]) this.close(stream);
      return;
    }
    const final = FINISHED.includes(progress.status);
    watched.last = {
      final,
      data: JSON.stringify({
        jobId,
        status: progress.status,
        rows: progress.rows,
        rowsByState: progress.rowsByState,
        ...(progress.error ? { error: progress.error } : {}),
      }),
    };
    for (const stream of [...watched.streams]) this.send(stream, watched.last);
  }

  /**
   * Writes an event if the job changed for this stream, at most one per interval: a change that comes
   * sooner waits for the next read, a final event for the rest of the interval.
   */
  private send(stream: Stream, event: { data: string; final: boolean }): void {
    if (event.data === stream.last && !event.final) return;
    const wait = stream.lastAt + this.limits.intervalMs - Date.now();
    if (wait > 0) {
      if (event.final)
        stream.finalTimer ??= setTimeout(() => {
          stream.lastAt = 0;
          this.send(stream, event);
        }, wait).unref();
      return;
    }
    stream.out.write(`id: ${++stream.events}\nevent: ${event.final ? "final" : "progress"}\ndata: ${event.data}\n\n`);
    stream.last = event.data;
    stream.lastAt = Date.now();
    if (event.final) this.close(stream);
  }

  /** Ends the streams of keys that expired or were revoked (a revocation anywhere shows within the authenticator's cache time). */
  private async checkKeys(): Promise<void> {
    const now = Date.now();
    for (const streams of [...this.byKey.values()]) {
      const [first] = streams;
      if (!first) continue;
      const expired = first.expiresAt !== null && first.expiresAt.getTime() <= now;
      const live = !expired && (await this.authenticator.authenticate(first.secret).catch(() => undefined)) !== null;
      if (!live) for (const stream of [...streams]) this.close(stream);
    }
  }
}
