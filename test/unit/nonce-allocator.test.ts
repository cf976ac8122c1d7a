import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { openDatabase, type SqlDriver } from "../../server/db";
import { MemoryNonceAllocator, SqlNonceAllocator, type NonceAllocator } from "../../server/engine";

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

describe("nonce allocators (in process)", function () {
  let dir: string;
  let db: SqlDriver;

  before(async function () {
    this.timeout(60_000);
    dir = await mkdtemp(path.join(tmpdir(), "nonces-"));
    db = await openDatabase({ dataDir: dir });
  });

  after(async function () {
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  let chain = 0;
  const cases: Array<[string, () => NonceAllocator]> = [
    ["in memory (PGlite: one process)", () => new MemoryNonceAllocator()],
    ["in SQL (shared by processes)", () => new SqlNonceAllocator(db, String(++chain))],
  ];

  for (const [name, make] of cases) {
    describe(name, function () {
      it("starts an address at its seed and counts up; 20 concurrent takes get 20 distinct consecutive nonces", async function () {
        const nonces = make();
        let seeds = 0;
        const seed = async () => {
          seeds++;
          return 7;
        };
        const taken = await Promise.all(Array.from({ length: 20 }, () => nonces.take(ALICE, seed)));
        expect([...taken].sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 7 + i));
        expect(seeds).to.be.at.least(1);
        expect(await nonces.take(BOB, async () => 0)).to.equal(0);
      });

      it("hands a recycled nonce out again before new ones, lowest first", async function () {
        const nonces = make();
        for (let i = 0; i < 5; i++) await nonces.take(ALICE, async () => 0);
        await nonces.recycle(ALICE, 3);
        await nonces.recycle(ALICE, 1);
        expect(await nonces.recycled()).to.deep.include({ address: ALICE, nonce: 1 });
        expect(await nonces.take(ALICE, async () => 0)).to.equal(1);
        expect(await nonces.take(ALICE, async () => 0)).to.equal(3);
        expect(await nonces.take(ALICE, async () => 0)).to.equal(5);
      });

      it("a recycled nonce claimed for a fill is not handed out, and can be claimed once", async function () {
        const nonces = make();
        await nonces.take(ALICE, async () => 0);
        await nonces.recycle(ALICE, 0);
        expect(await nonces.claimRecycled(ALICE, 0)).to.equal(true);
        expect(await nonces.claimRecycled(ALICE, 0)).to.equal(false);
        expect(await nonces.take(ALICE, async () => 0)).to.equal(1);
      });

      it("raiseTo skips past what the chain used and never goes down; resetTo starts again", async function () {
        const nonces = make();
        await nonces.take(ALICE, async () => 0);
        await nonces.recycle(ALICE, 0);
        await nonces.raiseTo(ALICE, 10);
        expect(await nonces.take(ALICE, async () => 0)).to.equal(10);
        await nonces.raiseTo(ALICE, 4);
        expect(await nonces.take(ALICE, async () => 0)).to.equal(11);
        await nonces.resetTo(ALICE, 2);
        expect(await nonces.take(ALICE, async () => 0)).to.equal(2);
      });
    });
  }
});
