import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { getAddress, hexlify, id, randomBytes } from "ethers";
import { openDatabase, type SqlDriver } from "../../server/db";
import { AllowlistStore } from "../../server/drops/allowlist-store";
import { buildAllowlistTree, LEAF_TYPES, type AllowlistEntry } from "../../server/drops/allowlist-tree";
import { VoucherStore } from "../../server/drops/voucher-store";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";

const entriesOf = (n: number): AllowlistEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    address: getAddress(hexlify(randomBytes(20))),
    allowance: BigInt(1 + (i % 4)),
    price: 10n ** 15n * BigInt(i % 2),
  }));

const backends: Array<[string, () => Promise<{ db: SqlDriver; release(): Promise<void> }>]> = [
  [
    "PGlite",
    async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), "drops-store-"));
      const db = await openDatabase({ dataDir });
      return { db, release: async () => (await db.close(), rmSync(dataDir, { recursive: true, force: true })) };
    },
  ],
  [
    "PostgreSQL",
    async () => {
      server ??= startPostgresServer();
      const db = await openDatabase({ databaseUrl: await (await server).createDatabase(), dataDir: "" });
      return { db, release: () => db.close() };
    },
  ],
];
let server: Promise<PostgresServer> | undefined;

after(async function () {
  this.timeout(60_000);
  if (server) await (await server).stop();
});

for (const [backend, open] of backends) {
  describe(`The allowlist and voucher store on ${backend} (migration 20)`, function () {
    let db: SqlDriver;
    let release: () => Promise<void>;
    const collection = getAddress(hexlify(randomBytes(20)));

    before(async function () {
      this.timeout(120_000);
      ({ db, release } = await open());
    });
    after(async () => release?.());

    it("answers each entry's proof from the stored nodes, as StandardMerkleTree makes it; none for an address off the list", async function () {
      const store = new AllowlistStore(db, "31337");
      const entries = entriesOf(1_001);
      await store.save(collection, entries, buildAllowlistTree(entries), { operationId: null, seenBlock: 1 });
      const reference = StandardMerkleTree.of(
        entries.map((e) => [e.address, e.allowance.toString(), e.price.toString()]),
        [...LEAF_TYPES],
      );
      for (const i of [0, 1, 500, 999, 1_000]) {
        const leaf = await store.leaf(collection, entries[i].address.toLowerCase());
        expect(leaf).to.deep.equal({
          allowance: entries[i].allowance,
          price: entries[i].price,
          proof: reference.getProof(i),
        });
      }
      expect(await store.leaf(collection, getAddress(hexlify(randomBytes(20))))).to.equal(undefined);
      expect((await store.find(collection)).active).to.include({ root: reference.root, entries: 1_001 });
    });

    it("a new allowlist in force later replaces the old one whole", async function () {
      const store = new AllowlistStore(db, "31337");
      const [kept] = entriesOf(1);
      const entries = [kept, ...entriesOf(2)];
      await store.save(collection, entries, buildAllowlistTree(entries), { operationId: null, seenBlock: 2 });
      expect(await store.find(collection)).to.deep.include({
        active: { ...(await store.find(collection)).active!, entries: 3, operationId: null },
      });
      expect((await store.find(collection)).pending).to.equal(undefined);
      expect((await store.leaf(collection, kept.address))!.allowance).to.equal(kept.allowance);
      const { rows } = await db.query("SELECT root FROM allowlists WHERE chain_id = '31337' AND address = $1", [
        collection.toLowerCase(),
      ]);
      expect(rows).to.have.length(1);
      // Another chain's allowlist of the same address is another one.
      expect(await new AllowlistStore(db, "1").find(collection)).to.deep.equal({});
    });

    it("keeps the vouchers it signed, by collection and id", async function () {
      const store = new VoucherStore(db, "31337");
      const voucher = {
        to: getAddress(hexlify(randomBytes(20))),
        amount: 2n,
        price: 5n,
        validUntil: 1_900_000_000n,
        id: id("v"),
      };
      await store.save(collection, voucher, voucher.to, 42);
      expect(await store.find(collection, voucher.id.toUpperCase().replace("0X", "0x"))).to.deep.include({
        ...voucher,
        signedBlock: 42,
      });
      expect(await store.find(collection, id("other"))).to.equal(undefined);
    });
  });
}
