import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { openDatabase, type SqlDriver } from "../../server/db";
import type { BlockHeader } from "../../server/chain/block-feed";
import {
  CollectionStore,
  ReorgDetected,
  ZERO_ADDRESS,
  type IndexedTransfer,
  type TransfersFinalHook,
} from "../../server/collections";
import type { TransferLog } from "../../server/collections/store";
import { forgetChain } from "../../server/chain/store-binding";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";
import { seedPglite } from "../support/pglite-template";
import { blockHash as hash, blockOf as block } from "./fixture";

const CHAIN = "31337";
const OWNER = "this-process";
const [ALICE, BOB] = ["0x" + "a1".repeat(20), "0x" + "b0".repeat(20)];

for (const backend of ["PGlite", "PostgreSQL"] as const) {
  describe(`collections store on ${backend}: ranges, final-transfer hooks, reorg roll-back`, function () {
    let db: SqlDriver;
    let store: CollectionStore;
    let pg: PostgresServer | undefined;
    let dir: string | undefined;
    let id: number;
    const handed: IndexedTransfer[] = [];
    /** Writes a row beside the index, in its transaction, as webhooks will. */
    const hook: TransfersFinalHook = async (tx, final) => {
      const transfers = await final();
      if (transfers.length === 0) return;
      handed.push(...transfers);
      await tx.query("INSERT INTO hook_events (n) VALUES ($1)", [transfers.length]);
    };
    const log = (
      n: number,
      logIndex: number,
      from: string,
      to: string,
      tokenId: number,
      branch = "0",
    ): TransferLog => ({
      collectionId: id,
      blockNumber: n,
      blockHash: hash(n, branch),
      logIndex,
      transactionHash: hash(n * 100 + logIndex, "7"),
      from,
      to,
      tokenId: String(tokenId),
    });
    const apply = (at: number, to: number, logs: TransferLog[], blocks: BlockHeader[], finalTo = to) =>
      store.apply({
        chainId: CHAIN,
        owner: OWNER,
        collections: [{ id, indexedBlock: at }],
        to,
        blocks,
        logs,
        finalTo,
        hooks: [hook],
      });
    const hookRows = async () =>
      Number((await db.query<{ n: string }>("SELECT coalesce(sum(n), 0)::text AS n FROM hook_events")).rows[0].n);

    before(async function () {
      this.timeout(60_000);
      if (backend === "PostgreSQL") {
        pg = await startPostgresServer();
        db = await openDatabase({ databaseUrl: await pg.createDatabase(), dataDir: "" });
      } else {
        dir = mkdtempSync(path.join(tmpdir(), "collections-store-"));
        db = await openDatabase({ dataDir: await seedPglite(dir) });
      }
      await db.exec("CREATE TABLE hook_events (n integer NOT NULL)");
      store = new CollectionStore(db);
      ({ id } = (await store.register(CHAIN, "0x" + "c0".repeat(20), "api", 10)).record);
      expect((await store.claim(CHAIN, OWNER, 30_000, 10)).map((r) => r.id)).to.deep.equal([id]);
    });

    after(async function () {
      this.timeout(30_000);
      await db?.close();
      await pg?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("applies a range with its owners and counts; transfers are handed to the hook once CONFIRMATIONS deep, in the same transaction", async function () {
      const first = await apply(
        9,
        11,
        [log(10, 0, ZERO_ADDRESS, ALICE, 1), log(10, 1, ZERO_ADDRESS, ALICE, 2), log(11, 0, ALICE, BOB, 2)],
        [block(10), block(11)],
        10, // CONFIRMATIONS = 2: block 11 is not final yet
      );
      expect(first).to.deep.include({ applied: [id], stored: 3 });
      expect(handed.map((t) => t.blockNumber)).to.deep.equal([10, 10]);
      expect(await hookRows()).to.equal(2);
      const record = (await store.find(CHAIN, "0x" + "c0".repeat(20)))!;
      expect(record).to.include({ indexedBlock: 11, finalBlock: 10, supply: 2n, holders: 2n });

      await apply(11, 12, [], [block(12)], 11);
      expect(handed.map((t) => `${t.blockNumber}:${t.logIndex}`)).to.deep.equal(["10:0", "10:1", "11:0"]);
      // Read near the head (with their blocks) from the start: news, each of them, so all handed over.
      expect(handed[2]).to.include({ from: ALICE, to: BOB, tokenId: "2", chainId: CHAIN });
    });

    it("a range that does not start where the index stands is not applied: no log is stored twice", async function () {
      const again = await apply(9, 12, [log(10, 0, ZERO_ADDRESS, ALICE, 1)], []);
      expect(again.applied).to.deep.equal([]);
      expect(again.stale).to.deep.equal([{ id, indexedBlock: 12, leased: true }]);
      const { rows } = await db.query<{ n: string }>(
        "SELECT count(*)::text AS n FROM index_transfers WHERE collection_id = $1",
        [id],
      );
      expect(Number(rows[0].n)).to.equal(3);
    });

    it("a log stored already above the position (never written so by the store) is skipped, not stored twice, and the rest of the range applies", async function () {
      const other = (await store.register("7", "0x" + "c3".repeat(20), "api", 1)).record.id;
      await store.claim("7", OWNER, 30_000, 10);
      const logs = [log(1, 0, ZERO_ADDRESS, ALICE, 1), log(1, 1, ZERO_ADDRESS, ALICE, 2)].map((l) => ({
        ...l,
        collectionId: other,
      }));
      await db.query(
        `INSERT INTO index_transfers (collection_id, block_number, log_index, block_hash, transaction_hash,
           from_address, to_address, token_id) VALUES ($1, 1, 1, $2, $3, $4, $5, 2)`,
        [other, logs[1].blockHash, logs[1].transactionHash, ZERO_ADDRESS, ALICE],
      );
      const result = await store.apply({
        chainId: "7",
        owner: OWNER,
        collections: [{ id: other, indexedBlock: 0 }],
        to: 1,
        logs,
        finalTo: 1,
        hooks: [],
      });
      expect(result).to.deep.include({ applied: [other], stored: 1 });
      const { rows } = await db.query<{ n: string }>(
        "SELECT count(*)::text AS n FROM index_transfers WHERE collection_id = $1",
        [other],
      );
      expect(Number(rows[0].n)).to.equal(2);
      expect(await store.snapshot((tx) => store.wallet(tx, other, ALICE))).to.deep.equal(["1"]);
    });

    it("a token minted again after its burn (its row is there already) takes its new owner and keeps its first mint block; the range's other mints go in too", async function () {
      const other = (await store.register("8", "0x" + "c4".repeat(20), "api", 1)).record.id;
      await store.claim("8", OWNER, 30_000, 10);
      const applyOther = (at: number, to: number, logs: TransferLog[]) =>
        store.apply({
          chainId: "8",
          owner: OWNER,
          collections: [{ id: other, indexedBlock: at }],
          to,
          logs: logs.map((l) => ({ ...l, collectionId: other })),
          finalTo: to,
          hooks: [],
        });
      await applyOther(0, 1, [log(1, 0, ZERO_ADDRESS, ALICE, 1)]);
      await applyOther(1, 2, [log(2, 0, ALICE, ZERO_ADDRESS, 1)]);
      const result = await applyOther(2, 3, [log(3, 0, ZERO_ADDRESS, BOB, 1), log(3, 1, ZERO_ADDRESS, BOB, 2)]);
      expect(result).to.deep.include({ applied: [other], stored: 2 });
      const token = await store.snapshot((tx) => store.token(tx, other, "1"));
      expect(token).to.deep.equal({ owner: BOB, mintedBlock: 1 });
      expect(await store.snapshot((tx) => store.wallet(tx, other, BOB))).to.deep.equal(["1", "2"]);
      expect(await store.snapshot((tx) => store.wallet(tx, other, ALICE))).to.deep.equal([]);
      const record = (await store.find("8", "0x" + "c4".repeat(20)))!;
      expect(record).to.include({ supply: 2n, holders: 1n });
    });

    it("a log whose hashes hold a tab, a newline, a backslash or \\N (a node's answer is not trusted to be hex) is stored as it was read", async function () {
      const other = (await store.register("9", "0x" + "c5".repeat(20), "api", 1)).record.id;
      await store.claim("9", OWNER, 30_000, 10);
      const odd = {
        ...log(1, 0, ZERO_ADDRESS, ALICE, 7),
        collectionId: other,
        blockHash: "0xa\tb\nc\rd\\e",
        transactionHash: "\\N",
      };
      await store.apply({
        chainId: "9",
        owner: OWNER,
        collections: [{ id: other, indexedBlock: 0 }],
        to: 1,
        logs: [odd],
        finalTo: 1,
        hooks: [],
      });
      const [stored] = await store.snapshot((tx) => store.tokenTransfers(tx, other, "7", 10));
      expect(stored).to.include({ blockHash: odd.blockHash, transactionHash: "\\N", from: ZERO_ADDRESS, to: ALICE });
      expect(await store.snapshot((tx) => store.token(tx, other, "7"))).to.deep.equal({ owner: ALICE, mintedBlock: 1 });
    });

    it("blocks that do not link to the stored hashes throw ReorgDetected and change nothing, the hook's rows included", async function () {
      const before = await hookRows();
      let thrown: unknown;
      try {
        await apply(12, 13, [log(13, 0, BOB, ALICE, 2, "1")], [block(13, "1", "1")], 13);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).to.be.instanceOf(ReorgDetected);
      expect((thrown as ReorgDetected).blockNumber).to.equal(12);
      expect(await hookRows()).to.equal(before);
      expect((await store.find(CHAIN, "0x" + "c0".repeat(20)))!.indexedBlock).to.equal(12);
    });

    it("rolling back to a fork removes the logs above it and recomputes owners and counts", async function () {
      await store.rollback(CHAIN, 10);
      const record = (await store.find(CHAIN, "0x" + "c0".repeat(20)))!;
      expect(record).to.include({ indexedBlock: 10, finalBlock: 10, supply: 2n, holders: 1n });
      const token = await store.snapshot((tx) => store.token(tx, id, "2"));
      expect(token).to.deep.equal({ owner: ALICE, mintedBlock: 10 });
      expect(await store.blockHashes(CHAIN, 0, 20)).to.deep.equal(new Map([[10, hash(10)]]));
      // The new branch applies on top of the fork.
      await apply(10, 11, [log(11, 0, ALICE, BOB, 1, "2")], [block(11, "2", "0")]);
      expect(await store.snapshot((tx) => store.wallet(tx, id, BOB))).to.deep.equal(["1"]);
    });

    it("a collection's history, read when it is first indexed, is not news and not handed over; once its head was followed, a catch-up after an outage read as a backfill is", async function () {
      const second = (await store.register(CHAIN, "0x" + "c1".repeat(20), "api", 100)).record.id;
      await store.claim(CHAIN, OWNER, 30_000, 10);
      const from = handed.length;
      const applySecond = (at: number, to: number, logs: TransferLog[], blocks?: BlockHeader[]) =>
        store.apply({
          chainId: CHAIN,
          owner: OWNER,
          collections: [{ id: second, indexedBlock: at }],
          to,
          blocks,
          logs,
          finalTo: to,
          hooks: [hook],
        });
      const minted = (n: number, tokenId: number): TransferLog => ({
        ...log(n, 0, ZERO_ADDRESS, ALICE, tokenId),
        collectionId: second,
      });
      await applySecond(99, 102, [minted(100, 1)]); // far below the head: history
      await applySecond(102, 104, [minted(104, 2)], [block(103), block(104)]); // the head, followed
      await applySecond(104, 200, [minted(150, 3)]); // down for longer than the live window, then caught up
      expect(handed.slice(from).map((t) => t.blockNumber)).to.deep.equal([104, 150]);
    });

    it("forgetting the chain deletes its collections' transfers and tokens too (no foreign key cascades there since migration 32)", async function () {
      const ids = (await db.query<{ id: number }>("SELECT id FROM indexed_collections WHERE chain_id = $1", [CHAIN]))
        .rows;
      const count = async (table: string, of: number[]) =>
        Number(
          (
            await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table} WHERE collection_id = ANY($1)`, [
              of,
            ])
          ).rows[0].n,
        );
      const other = (await store.register("5", "0x" + "c2".repeat(20), "api", 1)).record.id;
      await store.claim("5", OWNER, 30_000, 10);
      await store.apply({
        chainId: "5",
        owner: OWNER,
        collections: [{ id: other, indexedBlock: 0 }],
        to: 1,
        logs: [{ ...log(1, 0, ZERO_ADDRESS, ALICE, 1), collectionId: other }],
        finalTo: 1,
        hooks: [],
      });
      const mine = ids.map((row) => Number(row.id));
      expect([await count("index_transfers", mine), await count("index_tokens", mine)].every((n) => n > 1)).to.equal(
        true,
      );

      expect(await forgetChain(db, CHAIN)).to.include({ collections: 2 });
      // Chain 5's collection stays with its rows; chain 31337's are gone.
      expect([await count("index_transfers", mine), await count("index_tokens", mine)]).to.deep.equal([0, 0]);
      expect([await count("index_transfers", [other]), await count("index_tokens", [other])]).to.deep.equal([1, 1]);
    });
  });
}
