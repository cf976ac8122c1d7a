import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { openDatabase, type SqlDriver } from "../../server/db";
import { MemoryNonceAllocator, SqlNonceAllocator, type NonceAllocator } from "../../server/engine";
import { seedPglite } from "../support/pglite-template";

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const CAROL = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";

describe("nonce allocators (in process)", function () {
  let dir: string;
  let db: SqlDriver;

  before(async function () {
    this.timeout(60_000);
    dir = await mkdtemp(path.join(tmpdir(), "nonces-"));
    db = await openDatabase({ dataDir: await seedPglite(dir) });
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
          return { next: 7, free: [] };
        };
        const taken = await Promise.all(Array.from({ length: 20 }, () => nonces.take(ALICE, seed)));
        expect([...taken].sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 7 + i));
        expect(seeds).to.be.at.least(1);
        expect(await nonces.take(BOB, async () => ({ next: 0, free: [] }))).to.equal(0);
      });

      it("hands a recycled nonce out again before new ones, lowest first", async function () {
        const nonces = make();
        for (let i = 0; i < 5; i++) await nonces.take(ALICE, async () => ({ next: 0, free: [] }));
        await nonces.recycle(ALICE, 3);
        await nonces.recycle(ALICE, 1);
        expect(await nonces.recycled()).to.deep.include({ address: ALICE, nonce: 1 });
        expect(await nonces.take(ALICE, async () => ({ next: 0, free: [] }))).to.equal(1);
        expect(await nonces.take(ALICE, async () => ({ next: 0, free: [] }))).to.equal(3);
        expect(await nonces.take(ALICE, async () => ({ next: 0, free: [] }))).to.equal(5);
      });

      it("a recycled nonce claimed for a fill is not handed out, and can be claimed once", async function () {
        const nonces = make();
        await nonces.take(ALICE, async () => ({ next: 0, free: [] }));
        await nonces.recycle(ALICE, 0);
        expect(await nonces.claimRecycled(ALICE, 0)).to.equal(true);
        expect(await nonces.claimRecycled(ALICE, 0)).to.equal(false);
        expect(await nonces.take(ALICE, async () => ({ next: 0, free: [] }))).to.equal(1);
      });

      it("comes back down after a restart: the free nonces a seed names (gaps below a held one) go first, lowest first, then past the held ones", async function () {
        const nonces = make();
        // On chain: up to 4. Held by unfinished operations: 6 and 8. Nonces 4, 5 and 7 were taken
        // by a process killed before it recorded them: nothing will ever send them.
        const seed = async () => ({ next: 9, free: [4, 5, 7] });
        const taken = [];
        for (let i = 0; i < 4; i++) taken.push(await nonces.take(ALICE, seed));
        expect(taken).to.deep.equal([4, 5, 7, 9]);
      });

      it("raiseTo skips past what the chain used and never goes down; resetTo starts again", async function () {
        const nonces = make();
        await nonces.take(ALICE, async () => ({ next: 0, free: [] }));
        await nonces.recycle(ALICE, 0);
        await nonces.raiseTo(ALICE, 10);
        expect(await nonces.take(ALICE, async () => ({ next: 0, free: [] }))).to.equal(10);
        await nonces.raiseTo(ALICE, 4);
        expect(await nonces.take(ALICE, async () => ({ next: 0, free: [] }))).to.equal(11);
        expect(await nonces.resetTo(ALICE, 2, 12)).to.equal(true);
        expect(await nonces.take(ALICE, async () => ({ next: 0, free: [] }))).to.equal(2);
      });

      it("resetTo goes down only while no nonce was handed out after the caller's (else one would be handed out twice)", async function () {
        const nonces = make();
        const seed = async () => ({ next: 20, free: [] });
        const mine = await nonces.take(CAROL, seed);
        const later = await nonces.take(CAROL, seed); // another write took one after mine
        expect(await nonces.resetTo(CAROL, 5, mine + 1)).to.equal(false);
        expect(await nonces.take(CAROL, seed)).to.equal(later + 1);
        expect(await nonces.resetTo(CAROL, 5, later + 2)).to.equal(true);
        expect(await nonces.take(CAROL, seed)).to.equal(5);
      });
    });
  }
});
