import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet } from "ethers";
import { AuditLog } from "../../server/access";
import { openDatabase, type SqlDriver } from "../../server/db";
import { balanceCrossing } from "../../server/wallets";
import { MasterKey, readMasterKeyFile, writeMasterKeyFile } from "../../server/wallets/master-key";
import { checkMasterKey, MasterKeyError, resolveMasterKey } from "../../server/wallets/master-key-check";
import { rotateMasterKey } from "../../server/wallets/rotation";
import { WalletStore } from "../../server/wallets/wallet-store";

const ACTOR = { keyId: null, keyName: "test", clientAddress: "127.0.0.1" };

describe("the master key and the wallet store (in process, PGlite)", function () {
  this.timeout(30_000);
  let dir: string;
  let db: SqlDriver;
  let store: WalletStore;
  const key = MasterKey.generate();
  const local = Wallet.createRandom();

  before(async function () {
    // A fresh PGlite store runs every migration: over 30 s on a loaded CI machine (seen at load 17).
    this.timeout(120_000);
    dir = mkdtempSync(path.join(tmpdir(), "master-key-test-"));
    db = await openDatabase({ dataDir: path.join(dir, "pglite") });
    store = new WalletStore(db);
  });

  after(async function () {
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const secret = () => Buffer.from(local.privateKey.slice(2), "hex");
  const failsToStart = async (source: Parameters<typeof checkMasterKey>[2]) => {
    try {
      await checkMasterKey(db, store, source);
    } catch (err) {
      expect(err).to.be.instanceOf(MasterKeyError);
      return (err as Error).message;
    }
    throw new Error("the check passed");
  };

  it("a sealed key opens only for its own address, under its own master key, untampered; every sealing has a new nonce", function () {
    const sealed = key.sealWalletKey(local.address, secret());
    expect(key.openWalletKey(local.address.toLowerCase(), sealed).equals(secret())).to.equal(true);
    expect(() => key.openWalletKey(Wallet.createRandom().address, sealed)).to.throw();
    expect(() => MasterKey.generate().openWalletKey(local.address, sealed)).to.throw();
    const flipped = Buffer.from(sealed.ciphertext);
    flipped[0] ^= 1;
    expect(() => key.openWalletKey(local.address, { ...sealed, ciphertext: flipped })).to.throw();
    expect(key.sealWalletKey(local.address, secret()).nonce.equals(sealed.nonce)).to.equal(false);
  });

  it("the master key file is written 0600 and read back; a start may make it only while the store holds no local wallet", async function () {
    const file = path.join(dir, "master.key");
    const made = await resolveMasterKey(undefined, file, store);
    expect(made).to.include({ from: "file", file, created: true });
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    expect((await readMasterKeyFile(file))!.toFileText()).to.equal(made.key!.toFileText());
    await writeMasterKeyFile(path.join(dir, "other.key"), key);
    expect((await resolveMasterKey(undefined, path.join(dir, "other.key"), store)).created).to.equal(undefined);
  });

  it("a start passes with any key on a store without local wallets, then only with that key; none or another is refused by name", async function () {
    await checkMasterKey(db, store, { key, from: "WALLET_MASTER_KEY" });
    await db.transaction((tx) =>
      store.insert(tx, {
        address: local.address,
        label: "l",
        kind: "local",
        sealedKey: key.sealWalletKey(local.address, secret()),
      }),
    );
    await checkMasterKey(db, store, { key, from: "WALLET_MASTER_KEY" });
    let noFile: unknown;
    await resolveMasterKey(undefined, path.join(dir, "absent.key"), store).catch((err: unknown) => (noFile = err));
    expect((noFile as Error).message).to.match(
      /^WALLET_MASTER_KEY is missing: the store holds local wallets and .*absent\.key/,
    );
    expect(await failsToStart({ from: "none" })).to.equal(
      "WALLET_MASTER_KEY is missing: the store holds 1 local wallet sealed under a master key",
    );
    expect(await failsToStart({ key: MasterKey.generate(), from: "WALLET_MASTER_KEY" })).to.equal(
      "WALLET_MASTER_KEY is wrong: it does not decrypt the wallets in the store",
    );
    expect(await failsToStart({ key: MasterKey.generate(), from: "file", file: "/d/master.key" })).to.match(
      /is wrong: .* \(the key was read from \/d\/master\.key\)$/,
    );
  });

  it("a rotation with the wrong current key changes nothing; with the right one every wallet opens under the new key only", async function () {
    const audit = new AuditLog(db);
    const next = MasterKey.generate();
    let refused: unknown;
    await rotateMasterKey(db, MasterKey.generate(), next, audit, ACTOR).catch((err: unknown) => (refused = err));
    expect(refused).to.be.instanceOf(MasterKeyError);
    await checkMasterKey(db, store, { key, from: "WALLET_MASTER_KEY" });
    expect(await rotateMasterKey(db, key, next, audit, ACTOR)).to.equal(1);
    const wallet = (await store.find(local.address))!;
    expect(next.openWalletKey(wallet.address, wallet.sealedKey!).equals(secret())).to.equal(true);
    expect(() => key.openWalletKey(wallet.address, wallet.sealedKey!)).to.throw();
    await checkMasterKey(db, store, { key: next, from: "WALLET_MASTER_KEY" });
  });

  it("balanceCrossing reports falling below lowBalance once, recovering once, and is re-armed by a new lowBalance", async function () {
    const address = local.address;
    expect(await balanceCrossing(db, address, 5n)).to.equal(null); // no threshold yet
    await db.transaction((tx) => store.update(tx, address, { lowBalance: 100n }));
    expect(await balanceCrossing(db, address, 150n)).to.equal(null);
    expect(await balanceCrossing(db, address, 99n)).to.equal("fell-below");
    expect(await balanceCrossing(db, address, 50n)).to.equal(null);
    expect(await balanceCrossing(db, address, 100n)).to.equal("recovered");
    expect(await balanceCrossing(db, address, 10n)).to.equal("fell-below");
    await db.transaction((tx) => store.update(tx, address, { lowBalance: 20n }));
    expect(await balanceCrossing(db, address, 10n)).to.equal("fell-below");
  });
});
