import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { migrate, MIGRATIONS, type SqlDriver } from "../../server/db";
import { functionFiles } from "../../server/db/functions";

import { openPgliteDriver } from "../../server/db/pglite-driver";

/** The newest migration: a store at it has nothing left to apply. */
const LATEST = Math.max(...MIGRATIONS.map((m) => m.version));

describe("webhook store migrations", function () {
  it("8: fans out what a version-7 store left unfanned, moves ended deliveries to the log, and fans out new events as they are written", async function () {
    await atVersion(7, async (db) => {
      // A store at version 7, as the previous release left it: one endpoint, one event not fanned out.
      await db.query(`INSERT INTO webhook_endpoints (id, url, events, secret, created_at)
                    VALUES ('wh_a', 'https://example.com/hook', '["collection.transfer"]', 'whsec_x', now() - interval '1 minute')`);
      await db.query(`INSERT INTO webhook_events (id, type, data, collection, order_key)
                    VALUES ('evt_old', 'collection.transfer', '{}', '0xabc', 'collection.transfer:0xabc:1')`);

      // And one delivered already: it moves to the log, out of the queue.
      await db.query(`INSERT INTO webhook_events (id, type, data, collection, fanned_out)
                    VALUES ('evt_done', 'collection.transfer', '{}', '0xabc', true)`);
      await db.query(`INSERT INTO webhook_deliveries (endpoint_id, event_seq, status, attempts, attempt_log, delivered_at)
                    SELECT 'wh_a', seq, 'delivered', 1, '[{"status":200}]', now() FROM webhook_events WHERE id = 'evt_done'`);

      expect(await migrate(db)).to.include(8);

      const delivery = async (eventId: string) =>
        (
          await db.query<{ endpoint_id: string; status: string }>(
            `SELECT d.endpoint_id, d.status FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq
           WHERE e.id = $1`,
            [eventId],
          )
        ).rows;
      expect(await delivery("evt_old")).to.deep.equal([{ endpoint_id: "wh_a", status: "pending" }]);
      expect(await delivery("evt_done")).to.deep.equal([]);
      const { rows: logged } = await db.query<{ status: string; attempts: number }>(
        `SELECT l.status, l.attempts FROM webhook_delivery_log l JOIN webhook_events e ON e.seq = l.event_seq
       WHERE e.id = 'evt_done'`,
      );
      expect(logged).to.deep.equal([{ status: "delivered", attempts: 1 }]);
      await db.query(
        `INSERT INTO webhook_events (id, type, data, collection) VALUES ('evt_new', 'collection.transfer', '{}', '0xabc')`,
      );
      expect(await delivery("evt_new")).to.deep.equal([{ endpoint_id: "wh_a", status: "pending" }]);
    });
  });

  it("11: a collection followed near the head has its news begin where it is final; one still reading its history has none yet", async function () {
    await atVersion(10, async (db) => {
      await db.query(`INSERT INTO indexed_collections (chain_id, address, deployed_block, indexed_block, final_block, registered_by)
                    VALUES ('31337', '0xaa', 10, 500, 499, 'api'), ('31337', '0xbb', 10, 100, 100, 'api'),
                           ('31337', '0xcc', NULL, NULL, NULL, 'request')`);
      // The live window's block hashes, up to the head the index last read (500).
      await db.query(`INSERT INTO index_blocks (chain_id, number, hash, parent_hash)
                    SELECT '31337', n, 'h' || n, 'h' || (n - 1) FROM generate_series(437, 500) AS n`);
      expect(await migrate(db)).to.deep.equal(MIGRATIONS.filter((m) => m.version >= 11).map((m) => m.version));
      const { rows } = await db.query<{ address: string; news_from: string | number | null }>(
        "SELECT address, news_from FROM indexed_collections ORDER BY address",
      );
      expect(rows.map((r) => [r.address, r.news_from === null ? null : Number(r.news_from)])).to.deep.equal([
        ["0xaa", 499],
        ["0xbb", null],
        ["0xcc", null],
      ]);
    });
  });

  it("12: an endpoint's previous secret becomes the list of secrets rotated out, with the time it stops signing", async function () {
    await atVersion(11, async (db) => {
      await db.query(`INSERT INTO webhook_endpoints (id, url, events, secret, previous_secret, previous_secret_until)
                    VALUES ('wh_a', 'https://example.com/a', '["operation.sent"]', 'whsec_new', 'whsec_old',
                            '2030-01-02T03:04:05Z'),
                           ('wh_b', 'https://example.com/b', '["operation.sent"]', 'whsec_only', NULL, NULL)`);
      expect(await migrate(db)).to.deep.equal(MIGRATIONS.filter((m) => m.version >= 12).map((m) => m.version));
      const { rows } = await db.query<{ id: string; previous_secret: unknown }>(
        "SELECT id, previous_secret FROM webhook_endpoints ORDER BY id",
      );
      const [a, b] = rows.map((r) =>
        typeof r.previous_secret === "string" ? JSON.parse(r.previous_secret) : r.previous_secret,
      );
      expect(a).to.have.length(1);
      expect(a[0].secret).to.equal("whsec_old");
      expect(Date.parse(a[0].until)).to.equal(Date.parse("2030-01-02T03:04:05Z"));
      expect(b).to.equal(null);
    });
  });

  it("17: a store left by the cursor (version 15) keeps its undelivered events: they become queue rows, and new events are fanned out", async function () {
    await atVersion(15, async (db) => {
      await db.query(`INSERT INTO webhook_endpoints (id, url, events, secret)
                    VALUES ('wh_a', 'https://example.com/a', '["collection.transfer"]', 'whsec_x'),
                           ('wh_b', 'https://example.com/b', '["operation.sent"]', 'whsec_y')`);
      // PGlite's session wrote for the cursor: one event delivered (in the log, the cursor past it), one not yet read.
      await db.exec("SET webhooks.handoff = 'cursor'");
      const event = (id: string) =>
        db.query(
          `INSERT INTO webhook_events (id, type, data, collection, order_key)
                  VALUES ($1, 'collection.transfer', '{}', '0xabc', 'token:0xabc:1')`,
          [id],
        );
      await event("evt_done");
      await db.query(`INSERT INTO webhook_delivery_log (endpoint_id, event_seq, status, attempts, attempt_log, created_at)
                    SELECT 'wh_a', seq, 'delivered', 1, '[]', now() FROM webhook_events WHERE id = 'evt_done'`);
      await db.query("UPDATE webhook_cursor SET seq = (SELECT seq FROM webhook_events WHERE id = 'evt_done')");
      await event("evt_waiting");
      const queued = async () =>
        (
          await db.query<{ endpoint_id: string; id: string; order_key: string }>(
            `SELECT d.endpoint_id, e.id, d.order_key FROM webhook_deliveries d
             JOIN webhook_events e ON e.seq = d.event_seq ORDER BY e.seq`,
          )
        ).rows;
      expect(await queued()).to.deep.equal([]);

      expect(await migrate(db)).to.deep.equal(MIGRATIONS.filter((m) => m.version >= 16).map((m) => m.version));
      expect(await queued()).to.deep.equal([
        { endpoint_id: "wh_a", id: "evt_waiting", order_key: "wh_a token:0xabc:1" },
      ]);
      const { rows } = await db.query<{ n: string | number }>(
        "SELECT count(*) AS n FROM pg_tables WHERE tablename = 'webhook_cursor'",
      );
      expect(Number(rows[0].n)).to.equal(0);
      await event("evt_new");
      expect((await queued()).map((d) => d.id)).to.deep.equal(["evt_waiting", "evt_new"]);
    });
  });

  it("the SQL function files are applied after the migrations, skipped while their checksum is unchanged, and applied again when it changes", async function () {
    await atVersion(LATEST, async (db) => {
      expect(await migrate(db)).to.deep.equal([]);
      const recorded = async () =>
        (
          await db.query<{ name: string; checksum: string; applied_at: string }>(
            "SELECT name, checksum, applied_at::text AS applied_at FROM schema_functions ORDER BY name",
          )
        ).rows;
      const first = await recorded();
      expect(first.map((r) => [r.name, r.checksum])).to.deep.equal(functionFiles().map((f) => [f.name, f.checksum]));
      // A start with nothing changed applies nothing.
      expect(await migrate(db)).to.deep.equal([]);
      expect(await recorded()).to.deep.equal(first);
      // A file whose recorded checksum differs (a rule changed in its file) is applied again.
      await db.query(`CREATE OR REPLACE FUNCTION webhook_takes(w webhook_endpoints, k access_keys, e webhook_events)
                      RETURNS boolean LANGUAGE sql STABLE AS $$ SELECT false $$`);
      await db.query("UPDATE schema_functions SET checksum = 'stale' WHERE name = 'webhook_takes.sql'");
      await migrate(db);
      const { rows } = await db.query<{ src: string }>(
        "SELECT prosrc AS src FROM pg_proc WHERE proname = 'webhook_takes'",
      );
      expect(rows[0].src).to.include("w.enabled");
      const again = await recorded();
      expect(again.filter((r, i) => r.applied_at !== first[i].applied_at).map((r) => r.name)).to.deep.equal([
        "webhook_takes.sql",
      ]);
    });
  });
});

/** Runs `check` on a PGlite store left as the release with migrations up to `version` left it; removes it after. */
async function atVersion(version: number, check: (db: SqlDriver) => Promise<void>): Promise<void> {
  const { db, dir } = await storeAt(version);
  try {
    await check(db);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A PGlite store with the migrations up to `version` applied, as that release left it. */
async function storeAt(version: number) {
  const dir = mkdtempSync(path.join(tmpdir(), "webhook-migration-"));
  const db = await openPgliteDriver(path.join(dir, "pglite"));
  await db.exec(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
                 applied_at timestamptz NOT NULL DEFAULT now())`);
  for (const m of MIGRATIONS.filter((m) => m.version <= version)) {
    await db.exec(m.sql);
    await db.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
  }
  return { db, dir };
}
