/**
 * Migration 33 (issue 51) on PGlite and PostgreSQL: a store of the previous release, with rows the
 * bug left (two operations on one transaction hash, two unfinished ones on one nonce), migrates;
 * from then on the store refuses both states, whichever code path writes them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { migrate, MIGRATIONS, type SqlDriver, type SqlExecutor } from "../../server/db";
import { openPgDriver } from "../../server/db/pg-driver";
import { openPgliteDriver } from "../../server/db/pglite-driver";
import { countOperationsSharingTransaction, OperationStore } from "../../server/engine";
import type { Operation } from "../../server/engine";
import { NonceTaken } from "../../server/engine/operation-store";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";

const FROM = "0x00000000000000000000000000000000000000a1";

/** An operations row as the previous release wrote it; triggers off (no webhook functions needed). */
async function insertOld(db: SqlExecutor, id: string, status: string, nonce: number, hashes: string[], at: string) {
  await db.query(
    `INSERT INTO operations (id, chain_id, from_address, operation, fingerprint, status, nonce, tx_to, tx_data,
       tx_value, gas_limit, transactions, block_number, created_at)
     VALUES ($1, '31337', $2, 'mint', 'f', $3, $4, '0x00000000000000000000000000000000000000b2', '0x', '0', '21000',
       $5::jsonb, $6, $7::timestamptz)`,
    [
      id,
      FROM,
      status,
      nonce,
      JSON.stringify(hashes.map((hash) => ({ hash, raw: "0x" }))),
      status === "confirmed" ? 61 : null,
      at,
    ],
  );
}

function newOperation(id: string, nonce: number, hash: string): Operation {
  const now = new Date();
  return {
    id,
    chainId: "31337",
    from: FROM,
    operation: "mint",
    contractAddress: null,
    fingerprint: "f",
    idempotencyKey: null,
    status: "queued",
    nonce,
    call: { to: FROM, data: "0x", value: 0n, gasLimit: 21_000n },
    transactions: [{ hash, raw: "0x" }],
    context: {},
    result: null,
    error: null,
    response: null,
    blockNumber: null,
    blockHash: null,
    pendingSince: null,
    pendingSinceAt: null,
    final: false,
    reorgs: 0,
    accessKeyId: null,
    createdAt: now,
    updatedAt: now,
  };
}

const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

for (const backend of ["pglite", "postgres"] as const) {
  describe(`migration 33: one operation per transaction hash, one unfinished operation per nonce (${backend})`, function () {
    this.timeout(120_000);
    let db: SqlDriver;
    let dir: string | undefined;
    let pg: PostgresServer | undefined;

    before(async function () {
      if (backend === "pglite") {
        dir = mkdtempSync(path.join(tmpdir(), "migration-33-"));
        db = await openPgliteDriver(path.join(dir, "pglite"));
      } else {
        pg = await startPostgresServer();
        db = await openPgDriver(await pg.createDatabase());
      }
      await db.exec(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
                     applied_at timestamptz NOT NULL DEFAULT now())`);
      for (const m of MIGRATIONS.filter((m) => m.version <= 32)) {
        await db.exec(m.sql);
        await db.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
      }
      await db.transaction(async (tx) => {
        await tx.query("SET LOCAL session_replication_role = replica");
        // The pair: two confirmed operations on one transaction (the first lists it second).
        await insertOld(tx, "op-first", "confirmed", 56, [hash(1), hash(2)], "2026-01-01T00:00:00Z");
        await insertOld(tx, "op-second", "confirmed", 56, [hash(2)], "2026-01-01T00:01:00Z");
        // Two unfinished operations holding one nonce.
        await insertOld(tx, "op-held", "sent", 70, [hash(3)], "2026-01-01T00:02:00Z");
        await insertOld(tx, "op-twice", "sent", 70, [hash(4)], "2026-01-01T00:03:00Z");
      });
    });

    after(async function () {
      await db?.close();
      await pg?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("registers existing hashes oldest first, keeps a shared nonce with its oldest holder, and counts what the bug left", async function () {
      expect(await migrate(db)).to.include(33);
      const { rows } = await db.query<{ hash: string; operation_id: string }>(
        "SELECT hash, operation_id FROM operation_transactions ORDER BY hash",
      );
      expect(rows).to.deep.equal([
        { hash: hash(1), operation_id: "op-first" },
        { hash: hash(2), operation_id: "op-first" },
        { hash: hash(3), operation_id: "op-held" },
        { hash: hash(4), operation_id: "op-twice" },
      ]);
      const nonces = await db.query<{ id: string; nonce: string | null }>(
        "SELECT id, nonce::text AS nonce FROM operations WHERE id IN ('op-held', 'op-twice') ORDER BY id",
      );
      expect(nonces.rows).to.deep.equal([
        { id: "op-held", nonce: "70" },
        { id: "op-twice", nonce: null },
      ]);
      // op-second shares a hash of op-first, and both a mined nonce: each counted once per way.
      expect(await countOperationsSharingTransaction(db)).to.equal(3);
    });

    it("refuses a new row on a hash or an unfinished nonce another operation holds, and frees a deleted row's hashes", async function () {
      const store = new OperationStore(db);
      const lease = { owner: "test", ms: 60_000 };
      await store.insert(newOperation("new-a", 80, hash(10)), lease);
      let refused: unknown;
      await store.insert(newOperation("new-b", 80, hash(11)), lease).catch((err) => (refused = err));
      expect(refused, "a second unfinished holder of nonce 80").to.be.instanceOf(NonceTaken);
      refused = undefined;
      await store.insert(newOperation("new-c", 81, hash(10)), lease).catch((err) => (refused = err));
      expect(refused, "another operation's transaction").to.be.instanceOf(NonceTaken);
      // A re-sign onto a held nonce, and onto another's transaction, are refused alike.
      await store.insert(newOperation("new-d", 82, hash(12)), lease);
      refused = undefined;
      await store.update("new-d", { nonce: 80 }).catch((err) => (refused = err));
      expect(refused).to.be.instanceOf(NonceTaken);
      refused = undefined;
      await store
        .update("new-d", {
          transactions: [
            { hash: hash(12), raw: "0x" },
            { hash: hash(10), raw: "0x" },
          ],
        })
        .catch((err) => (refused = err));
      expect(refused).to.be.instanceOf(NonceTaken);
      // Its own transactions again, plus a new one: fine.
      await store.update("new-d", {
        transactions: [
          { hash: hash(12), raw: "0x" },
          { hash: hash(13), raw: "0x" },
        ],
      });
      // Never broadcast, deleted: its nonce and its hash are free again.
      await store.delete("new-a");
      await store.insert(newOperation("new-e", 80, hash(10)), lease);
      // Finished, the nonce is no longer held by an unfinished operation.
      await store.update("new-e", { status: "confirmed" });
      await store.insert(newOperation("new-f", 80, hash(14)), lease);
      expect(await countOperationsSharingTransaction(db)).to.equal(3);
    });
  });
}
