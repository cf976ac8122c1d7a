/**
 * The event streams' shared reads and lifetime (issue 47, finding 5), in process on a real PGlite
 * store: the store's `progress` reads are counted where they are made, and the 1 h lifetime is
 * given as a few seconds.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { PassThrough } from "node:stream";
import { expect } from "chai";
import { AccessKeyStore, ROOT_PRINCIPAL } from "../../server/access";
import { Authenticator } from "../../server/access/authenticator";
import { openDatabase, type SqlDriver } from "../../server/db";
import { createLogger } from "../../server/http/logger";
import { EVENT_STREAM_LIMITS, JobEventStreams } from "../../server/jobs/event-streams";
import { JobStore } from "../../server/jobs/job-store";
import { sleep } from "../api/harness";
import { seedPglite } from "../support/pglite-template";

const ROOT_SECRET = "event-streams-root-key-0123456789";

/** Everything a stream has carried so far, and whether it ended. */
function watch(out: PassThrough): { text: () => string; ended: () => boolean } {
  let text = "";
  let ended = false;
  out.setEncoding("utf8").on("data", (c: string) => (text += c));
  out.on("end", () => (ended = true));
  return { text: () => text, ended: () => ended };
}

describe("job event streams in process: one store read per job per interval, whatever the streams; a lifetime (PGlite)", function () {
  this.timeout(60_000);
  let dir: string;
  let db: SqlDriver;
  let store: JobStore;
  let reads: Map<string, number>;
  let authenticator: Authenticator;

  const addJob = async (id: string, status = "paused") => {
    await db.query(
      `INSERT INTO jobs (id, kind, chain_id, contract_address, from_address, status, row_count, batch_count,
         estimated_gas, estimated_cost_wei) VALUES ($1, 'airdrop', '31337', '0x01', '0x02', $2, 3, 1, '0', '0')`,
      [id, status],
    );
    await db.query(
      "INSERT INTO job_batches (job_id, idx, first_row, row_count, status) VALUES ($1, 0, 0, 3, 'pending')",
      [id],
    );
  };

  before(async function () {
    this.timeout(240_000);
    dir = mkdtempSync(path.join(tmpdir(), "event-streams-"));
    await seedPglite(dir);
    db = await openDatabase({ dataDir: dir });
    store = new JobStore(db);
    reads = new Map();
    const progress = store.progress.bind(store);
    store.progress = (id: string) => {
      reads.set(id, (reads.get(id) ?? 0) + 1);
      return progress(id);
    };
    authenticator = new Authenticator(new AccessKeyStore(db), ROOT_SECRET, createLogger("silent"));
  });

  after(async function () {
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("30 streams of one job and 1 of another, for 3 s: each job read about once a second, every stream told", async () => {
    const streams = new JobEventStreams(store, authenticator, { ...EVENT_STREAM_LIMITS, perKey: 100 });
    await addJob("job-a");
    await addJob("job-b");
    const outs = [
      ...Array.from({ length: 30 }, () => streams.open("job-a", ROOT_PRINCIPAL, ROOT_SECRET)),
      streams.open("job-b", ROOT_PRINCIPAL, ROOT_SECRET),
    ];
    const seen = outs.map(watch);
    await sleep(3_000);
    await db.query("UPDATE jobs SET status = 'cancelled' WHERE id = 'job-a'");
    await sleep(1_500);
    // Opened, then one read a second for 4.5 s: 5 or 6 reads, not 30 per second.
    expect(reads.get("job-a")).to.be.within(4, 7);
    expect(reads.get("job-b")).to.be.within(4, 7);
    for (const s of seen.slice(0, 30)) {
      expect(s.text()).to.match(/^id: 1\nevent: progress\ndata: \{"jobId":"job-a","status":"paused"/);
      expect(s.text()).to.include('event: final\ndata: {"jobId":"job-a","status":"cancelled"');
      expect(s.ended()).to.equal(true);
    }
    expect(seen[30].ended()).to.equal(false);
    expect(streams.size).to.equal(1);
    outs[30].destroy();
    streams.closeOutput(outs[30]);
    expect(streams.size).to.equal(0);
  });

  it("ends each stream after its lifetime (1 h by default), the job's reads with the last of them", async () => {
    const streams = new JobEventStreams(store, authenticator, { ...EVENT_STREAM_LIMITS, lifetimeMs: 1_500 });
    await addJob("job-c");
    const seen = watch(streams.open("job-c", ROOT_PRINCIPAL, ROOT_SECRET));
    await sleep(2_500);
    expect(seen.ended()).to.equal(true);
    expect(streams.size).to.equal(0);
    const readsAtEnd = reads.get("job-c");
    await sleep(2_000);
    expect(reads.get("job-c")).to.equal(readsAtEnd);
    expect(EVENT_STREAM_LIMITS.lifetimeMs).to.equal(60 * 60 * 1000);
  });
});
