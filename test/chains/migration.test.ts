import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { migrate, MIGRATIONS, type SqlDriver } from "../../server/db";
import { openPgliteDriver } from "../../server/db/pglite-driver";

const A = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const B = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

/**
 * Migration 24 from a store as today's one-chain code (migrations 1-23) leaves it: what was kept
 * for "the" chain moves to that chain's id, and nothing is lost.
 */
describe("migration 24: several chains in one store", function () {
  this.timeout(120_000);

  it("moves a one-chain store's wallet policies, spend and webhook events to its chain, and keeps every row", async function () {
    await atVersion(23, async (db) => {
      await db.query(`INSERT INTO chain_binding (chain_id, genesis_hash, anchor_number, anchor_hash)
                      VALUES ('8453', '0xgenesis', 100, '0xanchor')`);
      await db.query(
        `INSERT INTO wallets (address, label, kind, pkcs11_key_label, daily_spend_limit, low_balance, below_low_balance)
         VALUES ($1, 'treasury', 'pkcs11', 'k1', 1000, 50, true), ($2, 'plain', 'pkcs11', 'k2', NULL, NULL, false)`,
        [A, B],
      );
      await db.query(
        `INSERT INTO wallet_spend (address, day, spent) VALUES ($1, '2026-11-27', 400), ($1, '2026-11-28', 7)`,
        [A],
      );
      await db.query(
        `INSERT INTO operations (id, chain_id, from_address, operation, contract_address, fingerprint, status, nonce)
         VALUES ('op1', '8453', $1, 'mint', '0x5FbDB2315678afecb367f032d93F642f64180aa3', 'f', 'confirmed', 0)`,
        [A],
      );
      await db.query(`INSERT INTO webhook_endpoints (id, url, events, collections, secret)
                      VALUES ('wh_a', 'https://example.com/hook', '["collection.transfer","webhook.test"]', NULL, 'whsec_x')`);
      await db.query(`INSERT INTO webhook_events (id, type, data, collection)
                      VALUES ('evt_t', 'collection.transfer', '{"tokenId":"1"}', '0xabc')`);
      await db.query(`INSERT INTO webhook_events (id, type, data, endpoint_id)
                      VALUES ('evt_test', 'webhook.test', '{}', 'wh_a')`);
      await db.query(
        `INSERT INTO access_keys (id, name, secret_hash, scopes) VALUES ('k1', 'shop', 'h', '["nft:read"]')`,
      );
      const counted = async () =>
        Object.fromEntries(
          await Promise.all(
            ["wallets", "wallet_spend", "operations", "webhook_events", "webhook_deliveries", "access_keys"].map(
              async (t) => [
                t,
                Number((await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${t}`)).rows[0].n),
              ],
            ),
          ),
        );
      const before = await counted();

      expect(await migrate(db)).to.include(24);

      expect(await counted()).to.deep.equal(before);
      const { rows: policies } = await db.query<{
        address: string;
        chain_id: string;
        limit: string;
        low: string;
        below: boolean;
      }>(
        `SELECT address, chain_id, daily_spend_limit::text AS limit, low_balance::text AS low, below_low_balance AS below
         FROM wallet_policies ORDER BY address`,
      );
      expect(policies).to.deep.equal([{ address: A, chain_id: "8453", limit: "1000", low: "50", below: true }]);
      const { rows: spend } = await db.query<{ chain_id: string; day: string; spent: string }>(
        "SELECT chain_id, to_char(day, 'YYYY-MM-DD') AS day, spent::text AS spent FROM wallet_spend ORDER BY day",
      );
      expect(spend).to.deep.equal([
        { chain_id: "8453", day: "2026-11-27", spent: "400" },
        { chain_id: "8453", day: "2026-11-28", spent: "7" },
      ]);
      const { rows: events } = await db.query<{ id: string; chain_id: string | null; data: Record<string, unknown> }>(
        "SELECT id, chain_id, data FROM webhook_events ORDER BY id",
      );
      expect(events).to.deep.equal([
        { id: "evt_t", chain_id: "8453", data: { tokenId: "1", chainId: "8453" } },
        { id: "evt_test", chain_id: null, data: {} },
      ]);
      const { rows: keys } = await db.query<{ chains: unknown }>("SELECT chains FROM access_keys");
      expect(keys).to.deep.equal([{ chains: null }]);
      // The same address's spend on a second chain is a row of its own.
      await db.query(`INSERT INTO wallet_spend (address, chain_id, day, spent) VALUES ($1, '10', '2026-11-28', 1)`, [
        A,
      ]);
    });
  });

  it("a store that never bound a chain keeps its wallet policies for every chain ('*')", async function () {
    await atVersion(23, async (db) => {
      await db.query(
        `INSERT INTO wallets (address, label, kind, pkcs11_key_label, daily_spend_limit) VALUES ($1, 't', 'pkcs11', 'k', 9)`,
        [A],
      );
      await migrate(db);
      const { rows } = await db.query<{ chain_id: string; limit: string }>(
        "SELECT chain_id, daily_spend_limit::text AS limit FROM wallet_policies",
      );
      expect(rows).to.deep.equal([{ chain_id: "*", limit: "9" }]);
    });
  });
});

async function atVersion(version: number, check: (db: SqlDriver) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "chains-migration-"));
  const db = await openPgliteDriver(path.join(dir, "pglite"));
  try {
    await db.exec(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
                   applied_at timestamptz NOT NULL DEFAULT now())`);
    for (const m of MIGRATIONS.filter((m) => m.version <= version)) {
      await db.exec(m.sql);
      await db.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
    }
    await check(db);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
