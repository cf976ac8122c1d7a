import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { openDatabase, type SqlDriver } from "../../server/db";
import type { BlockHeader } from "../../server/chain/block-feed";
import { CollectionStore, ZERO_ADDRESS, type IndexedTransfer, type TransfersFinalHook } from "../../server/collections";
import type { EditionTransferLog } from "../../server/collections/edition-events";
import {
  edition,
  editionHolders,
  editionHoldings,
  editionOwners,
  editions,
} from "../../server/collections/edition-store";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";
import { seedPglite } from "../support/pglite-template";
import { blockHash as hash, blockOf as block } from "./fixture";

const CHAIN = "31337";
const OWNER = "this-process";
const ADDRESS = "0x" + "e1".repeat(20);
const [ALICE, BOB, CAROL] = ["0x" + "a1".repeat(20), "0x" + "b0".repeat(20), "0x" + "c0".repeat(20)];
/** Past a bigint column: an ERC-1155 amount is a uint256. */
const HUGE = 2n ** 100n;

for (const backend of ["PGlite", "PostgreSQL"] as const) {
  describe(`editions store on ${backend}: balances, supply and holders per edition, final moves, reorg roll-back`, function () {
    let db: SqlDriver;
    let store: CollectionStore;
    let pg: PostgresServer | undefined;
    let dir: string | undefined;
    let id: number;
    const handed: IndexedTransfer[] = [];
    const hook: TransfersFinalHook = async (_tx, final) => {
      handed.push(...(await final()));
    };
    const move = (
      n: number,
      logIndex: number,
      batchIndex: number,
      from: string,
      to: string,
      tokenId: bigint,
      amount: bigint,
      branch = "0",
    ): EditionTransferLog => ({
      collectionId: id,
      blockNumber: n,
      blockHash: hash(n, branch),
      logIndex,
      batchIndex,
      transactionHash: hash(n * 100 + logIndex, "7"),
      from,
      to,
      tokenId: tokenId.toString(),
      amount: amount.toString(),
    });
    const apply = (at: number, to: number, moves: EditionTransferLog[], blocks: BlockHeader[]) =>
      store.apply({
        chainId: CHAIN,
        owner: OWNER,
        collections: [{ id, indexedBlock: at }],
        to,
        blocks,
        logs: [],
        editions: moves,
        finalTo: to,
        hooks: [hook],
      });
    const read = <T>(fn: (db: Parameters<Parameters<CollectionStore["snapshot"]>[0]>[0]) => Promise<T>) =>
      store.snapshot(fn);

    before(async function () {
      this.timeout(60_000);
      if (backend === "PostgreSQL") {
        pg = await startPostgresServer();
        db = await openDatabase({ databaseUrl: await pg.createDatabase(), dataDir: "" });
      } else {
        dir = mkdtempSync(path.join(tmpdir(), "editions-store-"));
        db = await openDatabase({ dataDir: await seedPglite(dir) });
      }
      store = new CollectionStore(db);
      ({ id } = (await store.register(CHAIN, ADDRESS, "api", 10)).record);
      await store.setStandard(id, "erc1155");
      await store.claim(CHAIN, OWNER, 30_000, 10);
    });

    after(async function () {
      this.timeout(30_000);
      await db?.close();
      await pg?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("mints, a batch and a burn move balances, each edition's supply and holders and the collection's; each id of a batch is handed over with its amount", async function () {
      await apply(
        9,
        11,
        [
          move(10, 0, 0, ZERO_ADDRESS, ALICE, 1n, 10n),
          move(10, 1, 0, ZERO_ADDRESS, BOB, 2n, HUGE),
          // One TransferBatch: Alice gives Carol 4 of edition 1, and all her edition 1 is then 6.
          move(11, 0, 0, ALICE, CAROL, 1n, 4n),
          move(11, 0, 1, BOB, CAROL, 2n, HUGE),
        ],
        [block(10), block(11)],
      );
      expect((await store.find(CHAIN, ADDRESS))!).to.include({
        standard: "erc1155",
        supply: 10n + HUGE,
        holders: 2n, // Alice and Carol: Bob gave all he had
      });
      expect(await read((tx) => editions(tx, id, 10))).to.deep.equal([
        { tokenId: "1", supply: 10n, holders: 2n, mintedBlock: 10 },
        { tokenId: "2", supply: HUGE, holders: 1n, mintedBlock: 10 },
      ]);
      expect(await read((tx) => editionHolders(tx, id, "1", 10))).to.deep.equal([
        { holder: ALICE, amount: 6n },
        { holder: CAROL, amount: 4n },
      ]);
      expect(await read((tx) => editionHolders(tx, id, "1", 1, { amount: 6n, holder: ALICE }))).to.deep.equal([
        { holder: CAROL, amount: 4n },
      ]);
      expect(await read((tx) => editionOwners(tx, id, 10))).to.deep.equal([
        { holder: CAROL, amount: HUGE + 4n, editions: 2n },
        { holder: ALICE, amount: 6n, editions: 1n },
      ]);
      expect(await read((tx) => editionHoldings(tx, id, BOB, 10))).to.deep.equal([]);
      expect(handed.map((t) => [t.logIndex, t.tokenId, t.amount, t.to])).to.deep.equal([
        [0, "1", "10", ALICE],
        [1, "2", HUGE.toString(), BOB],
        [0, "1", "4", CAROL],
        [0, "2", HUGE.toString(), CAROL],
      ]);

      await apply(11, 12, [move(12, 0, 0, CAROL, ZERO_ADDRESS, 1n, 4n)], [block(12)]);
      expect(await read((tx) => edition(tx, id, "1"))).to.deep.equal({
        tokenId: "1",
        supply: 6n,
        holders: 1n,
        mintedBlock: 10,
      });
      expect((await store.find(CHAIN, ADDRESS))!).to.include({ supply: 6n + HUGE, holders: 2n });
    });

    it("a reorg undoes the moves above the fork and counts the editions they touched anew", async function () {
      await apply(
        12,
        14,
        [move(13, 0, 0, ZERO_ADDRESS, BOB, 3n, 7n), move(14, 0, 0, ALICE, BOB, 1n, 6n)],
        [block(13), block(14)],
      );
      expect((await store.find(CHAIN, ADDRESS))!).to.include({ supply: 13n + HUGE, holders: 2n });
      const { removed } = await store.rollback(CHAIN, 12);
      expect(removed).to.equal(2);
      expect((await store.find(CHAIN, ADDRESS))!).to.include({ indexedBlock: 12, supply: 6n + HUGE, holders: 2n });
      expect(await read((tx) => editions(tx, id, 10))).to.deep.equal([
        { tokenId: "1", supply: 6n, holders: 1n, mintedBlock: 10 },
        { tokenId: "2", supply: HUGE, holders: 1n, mintedBlock: 10 },
      ]);
      expect(await read((tx) => editionOwners(tx, id, 10))).to.deep.equal([
        { holder: CAROL, amount: HUGE, editions: 1n },
        { holder: ALICE, amount: 6n, editions: 1n },
      ]);
      // The new branch: another block 13, read on from the fork.
      await apply(12, 13, [move(13, 0, 0, ZERO_ADDRESS, ALICE, 3n, 1n, "9")], [block(13, "9", "0")]);
      expect(await read((tx) => editionHoldings(tx, id, ALICE, 10))).to.deep.equal([
        { tokenId: "1", amount: 6n },
        { tokenId: "3", amount: 1n },
      ]);
      expect((await store.find(CHAIN, ADDRESS))!).to.include({ supply: 7n + HUGE, holders: 2n });
    });

    it("a move stored already above the position (never written so by the store) is skipped, not stored twice, and the rest of the range applies", async function () {
      const other = (await store.register(CHAIN, "0x" + "e2".repeat(20), "api", 21)).record.id;
      await store.setStandard(other, "erc1155");
      await store.claim(CHAIN, OWNER, 30_000, 10);
      const moves = [move(21, 0, 0, ZERO_ADDRESS, ALICE, 1n, 5n), move(21, 0, 1, ZERO_ADDRESS, ALICE, 2n, 3n)].map(
        (m) => ({ ...m, collectionId: other }),
      );
      await db.query(
        `INSERT INTO index_edition_transfers (collection_id, block_number, log_index, batch_index, block_hash,
           transaction_hash, from_address, to_address, token_id, amount) VALUES ($1, 21, 0, 1, $2, $3, $4, $5, 2, 3)`,
        [other, moves[1].blockHash, moves[1].transactionHash, ZERO_ADDRESS, ALICE],
      );
      await store.apply({
        chainId: CHAIN,
        owner: OWNER,
        collections: [{ id: other, indexedBlock: 20 }],
        to: 21,
        logs: [],
        editions: moves,
        finalTo: 21,
        hooks: [],
      });
      const { rows } = await db.query<{ n: string }>(
        "SELECT count(*)::text AS n FROM index_edition_transfers WHERE collection_id = $1",
        [other],
      );
      expect(Number(rows[0].n)).to.equal(2);
      // Only the move stored now moved a balance: the one found there was not applied again.
      expect(await read((tx) => editionHoldings(tx, other, ALICE, 10))).to.deep.equal([{ tokenId: "1", amount: 5n }]);
    });
  });
}
