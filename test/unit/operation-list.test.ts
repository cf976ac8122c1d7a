import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { openDatabase, type SqlDriver } from "../../server/db";
import { OperationStore, type Operation } from "../../server/engine";
import { OperationList, type OperationListQuery, type OperationReader } from "../../server/engine/operation-list";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";
import { seedPglite } from "../support/pglite-template";

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const ONE = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const TWO = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
const LEASE = { owner: "test", ms: 60_000 };

function operation(fields: Partial<Operation>): Operation {
  const now = new Date();
  return {
    id: randomUUID(),
    chainId: "31337",
    from: ALICE,
    operation: "mint",
    contractAddress: ONE,
    fingerprint: "fp",
    idempotencyKey: null,
    status: "confirmed",
    nonce: 1,
    call: null,
    transactions: [],
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
    ...fields,
  };
}

for (const backend of ["PGlite", "PostgreSQL"] as const) {
  describe(`operation list: GET /nft/operations in SQL (${backend})`, function () {
    let dir: string | undefined;
    let server: PostgresServer | undefined;
    let db: SqlDriver;
    let list: OperationList;
    let store: OperationStore;

    before(async function () {
      this.timeout(120_000);
      if (backend === "PGlite") {
        dir = await mkdtemp(path.join(tmpdir(), "operation-list-"));
        db = await openDatabase({ dataDir: await seedPglite(dir) });
      } else {
        server = await startPostgresServer();
        db = await openDatabase({ databaseUrl: await server.createDatabase(), dataDir: "" });
      }
      list = new OperationList(db);
      store = new OperationStore(db);
    });

    after(async function () {
      await db?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
      await server?.stop();
    });

    beforeEach(async function () {
      await db.query("DELETE FROM operations");
    });

    /** Every operation the query reads, page by page (`limit` each), and the number of pages. */
    async function readAll(query: Omit<OperationListQuery, "chainId" | "after">) {
      const ids: string[] = [];
      let after: OperationListQuery["after"];
      let pages = 0;
      do {
        const page = await list.page({ chainId: "31337", ...query, after });
        ids.push(...page.operations.map((op) => op.id));
        after = page.next;
        pages++;
      } while (after && pages < 100);
      return { ids, pages };
    }

    it("pages newest first through rows written in one statement (one created_at), each once", async function () {
      // The store commits concurrent inserts as one statement: they share now().
      const together = Array.from({ length: 7 }, () => operation({}));
      await Promise.all(together.map((op) => store.insert(op, LEASE)));
      const later = operation({});
      await store.insert(later, LEASE);
      const { ids, pages } = await readAll({ reader: { all: true }, limit: 3 });
      expect(pages).to.equal(3);
      expect(ids).to.have.length(8);
      expect(new Set(ids).size).to.equal(8);
      expect(ids[0]).to.equal(later.id);
      expect(ids.slice(1)).to.deep.equal(
        together
          .map((op) => op.id)
          .sort()
          .reverse(),
      );
    });

    it("reads for a limited key what GET /nft/operations/{id} would show it, and pages alike", async function () {
      const rows = {
        aliceOnOne: operation({ from: ALICE, contractAddress: ONE }),
        aliceOnTwo: operation({ from: ALICE, contractAddress: TWO }),
        bobOnOne: operation({ from: BOB, contractAddress: ONE }),
        bobDeploys: operation({ from: BOB, operation: "deploy", contractAddress: TWO }),
        bobDeploysOne: operation({ from: BOB, operation: "deploy", contractAddress: ONE }),
        bobNonceFill: operation({ from: BOB, operation: "nonceFill", contractAddress: null }),
        madeByKeyOnTwo: operation({ from: BOB, contractAddress: TWO, accessKeyId: "ak_1" }),
      };
      for (const op of Object.values(rows)) await store.insert(op, LEASE);
      const read = async (reader: OperationReader, limit = 2) =>
        new Set(
          (await readAll({ reader, limit })).ids.map((id) => Object.entries(rows).find(([, op]) => op.id === id)![0]),
        );
      const limited = (wallets: string[] | null, collections: string[] | null): OperationReader => ({
        all: false,
        keyId: "ak_1",
        wallets: wallets?.map((w) => w.toLowerCase()) ?? null,
        collections: collections?.map((c) => c.toLowerCase()) ?? null,
      });
      expect(await read(limited([ALICE], null))).to.deep.equal(new Set(["aliceOnOne", "aliceOnTwo", "madeByKeyOnTwo"]));
      // A deployment is on the collection it made; a nonce fill is on none: only the key's own show.
      expect(await read(limited(null, [ONE]))).to.deep.equal(
        new Set(["aliceOnOne", "bobOnOne", "bobDeploysOne", "madeByKeyOnTwo"]),
      );
      expect(await read(limited([BOB], [ONE]), 1)).to.deep.equal(
        new Set(["bobOnOne", "bobDeploysOne", "madeByKeyOnTwo"]),
      );
      expect(await read({ all: false, keyId: "ak_1", wallets: null, collections: null })).to.have.property("size", 7);
    });

    it("filters by status, wallet and collection, the addresses in any case", async function () {
      const failed = operation({ from: BOB, status: "failed", contractAddress: TWO });
      const sent = operation({ from: ALICE, status: "sent" });
      const confirmed = operation({ from: ALICE });
      for (const op of [failed, sent, confirmed]) await store.insert(op, LEASE);
      const ids = async (query: Partial<OperationListQuery>) =>
        (await list.page({ chainId: "31337", reader: { all: true }, limit: 10, ...query })).operations.map(
          (op) => op.id,
        );
      expect(await ids({ status: "failed" })).to.deep.equal([failed.id]);
      expect(await ids({ status: "sent", wallet: ALICE.toLowerCase() })).to.deep.equal([sent.id]);
      expect(await ids({ status: "confirmed" })).to.deep.equal([confirmed.id]);
      expect(await ids({ collection: TWO.toLowerCase() })).to.deep.equal([failed.id]);
      expect(await ids({ chainId: "1" })).to.deep.equal([]);
    });
  });
}
