/**
 * Keystore imports derive their key off the event loop (API.md, "Wallets"): scrypt and pbkdf2 both
 * through Node's crypto on libuv's thread pool, so the loop goes on turning while a slow
 * derivation runs, and requests around an import are answered meanwhile.
 */
import { expect } from "chai";
import { encryptKeystoreJson, Wallet } from "ethers";
import { KeystoreImporter } from "../../server/wallets/keystore-import";
import { pbkdf2Keystore } from "../wallets/fixture";

/** How many times the event loop turned (setImmediate) while `work` ran, and its result. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ turns: number; result: T }> {
  let turns = 0;
  let done = false;
  const spinning = new Promise<void>((resolve) => {
    const spin = () => {
      if (done) return resolve();
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
  });
  const result = await work().finally(() => (done = true));
  await spinning;
  return { turns, result };
}

describe("keystore imports (in process)", function () {
  const wallet = new Wallet(Wallet.createRandom().privateKey);
  const password = "correct horse battery staple";

  it("a pbkdf2 keystore (2^18 rounds) is derived off the event loop: the loop turns throughout (issue 35)", async function () {
    const keystore = pbkdf2Keystore(wallet, password, 2 ** 18);
    const { turns, result } = await turnsDuring(() => new KeystoreImporter().decrypt(keystore, password));
    expect(`0x${result.toString("hex")}`).to.equal(wallet.privateKey);
    // Derived on the loop (ethers' pbkdf2), the whole derivation is one synchronous block: a turn or two.
    expect(turns, "event-loop turns during the import").to.be.greaterThan(50);
  });

  it("a scrypt keystore is derived off the event loop too", async function () {
    const keystore = JSON.parse(await encryptKeystoreJson(wallet, password, { scrypt: { N: 2 ** 15 } }));
    const { turns, result } = await turnsDuring(() => new KeystoreImporter().decrypt(keystore, password));
    expect(`0x${result.toString("hex")}`).to.equal(wallet.privateKey);
    expect(turns, "event-loop turns during the import").to.be.greaterThan(50);
  });
});
