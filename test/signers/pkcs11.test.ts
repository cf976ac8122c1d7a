import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { existsSync, realpathSync, renameSync } from "node:fs";
import path from "node:path";
import {
  computeAddress,
  concat,
  dataSlice,
  getAddress,
  getBytes,
  getCreateAddress,
  id,
  keccak256,
  recoverAddress,
  toBeHex,
  toBigInt,
  Transaction,
  Wallet,
  type TransactionRequest,
} from "ethers";
import { ethers, network } from "hardhat";
import {
  Pkcs11Signer,
  Pkcs11SignerError,
  Pkcs11Token,
  type Pkcs11FailureReason,
  type Pkcs11Key,
} from "../../server/signers/pkcs11";
import { ethereumSignature, SECP256K1_N } from "../../server/signers/pkcs11/secp256k1";
import { createSoftHsmToken, type SoftHsmToken } from "../support/softhsm";

const HALF_N = SECP256K1_N / 2n;
const ECRECOVER = "0x0000000000000000000000000000000000000001";
const ROOT = path.resolve(__dirname, "..", "..");

/** The error `promise` rejects with, checked to be a Pkcs11SignerError of `reason`. */
async function failure(promise: Promise<unknown>, reason: Pkcs11FailureReason): Promise<Pkcs11SignerError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(Pkcs11SignerError);
    expect((err as Pkcs11SignerError).reason).to.equal(reason);
    return err as Pkcs11SignerError;
  }
  expect.fail(`expected ${reason}, but it succeeded`);
}

/** What the chain's ecrecover precompile (0x…01) answers for a digest and an Ethereum signature. */
async function chainRecover(digest: string, v: number, r: string, s: string): Promise<string> {
  const answer = await ethers.provider.call({ to: ECRECOVER, data: concat([digest, toBeHex(v, 32), r, s]) });
  return getAddress(dataSlice(answer, 12));
}

describe("PKCS#11 signer on a SoftHSM2 token (in-process Hardhat network)", function () {
  let hsm: SoftHsmToken;
  let restoreEnv: () => void;
  const openToken = (pin = hsm.pin, tokenLabel = hsm.tokenLabel) =>
    Pkcs11Token.open({ modulePath: hsm.modulePath, tokenLabel, pin });

  before(function () {
    hsm = createSoftHsmToken({ tokenLabel: "signer-test", pin: "pin-7310-secret" });
    restoreEnv = hsm.useInThisProcess();
  });

  after(function () {
    restoreEnv?.();
    hsm?.remove();
  });

  describe("from the token's r || s to an Ethereum signature (no token needed)", function () {
    it("gives exactly ethers' own signature whether the token chose the low or the high s", function () {
      const wallet = Wallet.createRandom();
      for (let i = 0; i < 50; i++) {
        const digest = getBytes(id(`digest ${i}`));
        const expected = wallet.signingKey.sign(digest);
        const highS = toBeHex(SECP256K1_N - toBigInt(expected.s), 32);
        for (const s of [expected.s, highS]) {
          const got = ethereumSignature(digest, getBytes(concat([expected.r, s])), wallet.signingKey.publicKey);
          expect(got.serialized, `digest ${i}`).to.equal(expected.serialized);
        }
      }
    });

    it("a signature that does not verify against the public key is SIGN_FAILED", function () {
      const [signerKey, otherKey] = [Wallet.createRandom(), Wallet.createRandom()];
      const digest = getBytes(id("mismatch"));
      const sig = signerKey.signingKey.sign(digest);
      expect(() => ethereumSignature(digest, getBytes(concat([sig.r, sig.s])), otherKey.signingKey.publicKey))
        .to.throw(Pkcs11SignerError, "does not verify against the key's public key")
        .with.property("reason", "SIGN_FAILED");
    });
  });

  describe("opening the token", function () {
    it("a wrong PIN is refused by the token: LOGIN_FAILED naming the token, never the PIN", async function () {
      const err = await failure(openToken("not-the-pin-4242"), "LOGIN_FAILED");
      expect(err.message).to.equal('wrong PIN for PKCS#11 token "signer-test" (CKR_PIN_INCORRECT)');
      expect(err.message).not.to.include("not-the-pin-4242");
      expect(err.message).not.to.include(hsm.pin);
    });

    it("a token label the module does not have is TOKEN_NOT_FOUND, listing the labels it has", async function () {
      const err = await failure(openToken(hsm.pin, "no-such-token"), "TOKEN_NOT_FOUND");
      expect(err.message).to.include('no token labelled "no-such-token"');
      expect(err.message).to.include('tokens present: "signer-test"');
      expect(err.message).not.to.include(hsm.pin);
    });

    it("a module path with no library is MODULE_UNAVAILABLE", async function () {
      const err = await failure(
        Pkcs11Token.open({ modulePath: "/nonexistent/libpkcs11.so", tokenLabel: hsm.tokenLabel, pin: hsm.pin }),
        "MODULE_UNAVAILABLE",
      );
      expect(err.message).to.include("/nonexistent/libpkcs11.so");
      expect(err.message).not.to.include(hsm.pin);
    });
  });

  describe("with the token open", function () {
    let token: Pkcs11Token;
    let key: Pkcs11Key;
    let signer: Pkcs11Signer;

    before(async function () {
      token = await openToken();
      key = await token.generateKey("treasury");
      signer = await Pkcs11Signer.open(token, "treasury");
    });

    after(async function () {
      await token?.close();
    });

    async function fees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
      const block = await ethers.provider.getBlock("latest");
      return { maxFeePerGas: block!.baseFeePerGas! * 2n + 10n ** 9n, maxPriorityFeePerGas: 10n ** 9n };
    }

    async function fund(address: string): Promise<void> {
      await network.provider.send("hardhat_setBalance", [address, toBeHex(10n ** 20n)]);
    }

    it("a generated key is a secp256k1 pair, private half sensitive and not extractable, found again by its label", async function () {
      expect(key.address).to.equal(computeAddress(key.publicKey));
      expect(getBytes(key.publicKey)).to.have.length(65);
      expect(key.sensitive).to.equal(true);
      expect(key.extractable).to.equal(false);
      expect(signer.kind).to.equal("pkcs11");
      expect(signer.address).to.equal(key.address);
      const found = await token.findKey("treasury");
      expect(found.address).to.equal(key.address);
    });

    it("a second open of the logged-in token shares its login: it finds the key, and its close leaves the first signing", async function () {
      const again = await openToken();
      try {
        expect((await again.findKey("treasury")).address).to.equal(key.address);
      } finally {
        await again.close();
      }
      // The first open still signs after the second one closed.
      const digest = id("still signing");
      expect(recoverAddress(digest, await signer.signDigest(digest))).to.equal(key.address);
    });

    it("the module opened by another path to the same library (Debian's symlink) shares the initialized module", async function () {
      const samePathAnotherWay = realpathSync(hsm.modulePath);
      const again = await Pkcs11Token.open({
        modulePath: samePathAnotherWay,
        tokenLabel: hsm.tokenLabel,
        pin: hsm.pin,
      });
      try {
        expect((await again.findKey("treasury")).address).to.equal(key.address);
      } finally {
        await again.close();
      }
      const digest = id("after the other path closed");
      expect(recoverAddress(digest, await signer.signDigest(digest))).to.equal(key.address);
    });

    it("a second open with a wrong PIN while the token is logged in is refused too, without the PIN", async function () {
      const err = await failure(openToken("guess-0000"), "LOGIN_FAILED");
      expect(err.message).to.include('wrong PIN for PKCS#11 token "signer-test"');
      expect(err.message).not.to.include("guess-0000");
    });

    it("an unknown key label is KEY_NOT_FOUND; a label in use cannot be generated again", async function () {
      const missing = await failure(Pkcs11Signer.open(token, "no-such-key"), "KEY_NOT_FOUND");
      expect(missing.message).to.equal('no private key labelled "no-such-key" in PKCS#11 token "signer-test"');
      const taken = await failure(token.generateKey("treasury"), "KEY_EXISTS");
      expect(taken.message).to.include('already has a key labelled "treasury"');
    });

    it("50 digests: every s is low, both recovery ids occur, ethers and the ecrecover precompile give the key's address", async function () {
      const digests = Array.from({ length: 50 }, (_, i) => keccak256(toBeHex(i, 32)));
      // What the token itself returns: either s of the pair, so low-s normalization is needed.
      const raw = await Promise.all(digests.map((digest) => token.signDigest(key, getBytes(digest))));
      const highFromToken = raw.filter((rs) => toBigInt(rs.subarray(32)) > HALF_N).length;
      expect(highFromToken, "signatures the token gave with a high s").to.be.greaterThan(0);

      const signatures = await Promise.all(digests.map((digest) => signer.signDigest(digest)));
      const onChain = await Promise.all(signatures.map((sig, i) => chainRecover(digests[i], sig.v, sig.r, sig.s)));
      for (const [i, sig] of signatures.entries()) {
        expect(toBigInt(sig.s) <= HALF_N, `s of signature ${i}`).to.equal(true);
        expect(recoverAddress(digests[i], sig)).to.equal(key.address);
        expect(onChain[i], `ecrecover of signature ${i}`).to.equal(key.address);
      }
      expect(new Set(signatures.map((sig) => sig.v))).to.deep.equal(new Set([27, 28]));
    });

    it("50 transactions (legacy and EIP-1559, transfers, calls, deployments) parse back as from the key, low s", async function () {
      const { chainId } = await ethers.provider.getNetwork();
      const requests: TransactionRequest[] = Array.from({ length: 50 }, (_, i) => ({
        chainId,
        nonce: i,
        to: i % 5 === 4 ? null : Wallet.createRandom().address,
        value: BigInt(i) * 10n ** 15n,
        data: i % 3 === 0 ? "0x" : id(`call ${i}`),
        gasLimit: 100_000 + i,
        ...(i % 2 === 0
          ? { type: 0, gasPrice: 10n ** 9n + BigInt(i) }
          : { type: 2, maxFeePerGas: 2n * 10n ** 9n, maxPriorityFeePerGas: BigInt(i) }),
      }));
      const raws = await Promise.all(requests.map((request) => signer.signTransaction(request)));
      const parsed = raws.map((raw) => Transaction.from(raw));
      const onChain = await Promise.all(
        parsed.map((tx) => chainRecover(tx.unsignedHash, tx.signature!.v, tx.signature!.r, tx.signature!.s)),
      );
      for (const [i, tx] of parsed.entries()) {
        expect(tx.from, `from of transaction ${i}`).to.equal(key.address);
        expect(tx.type).to.equal(i % 2 === 0 ? 0 : 2);
        expect(tx.nonce).to.equal(i);
        expect(toBigInt(tx.signature!.s) <= HALF_N).to.equal(true);
        expect(onChain[i]).to.equal(key.address);
      }
    });

    it("a signed EIP-1559 transfer is mined with the chain's from = the token key's address", async function () {
      await fund(key.address);
      const recipient = Wallet.createRandom().address;
      const { chainId } = await ethers.provider.getNetwork();
      const nonce = await ethers.provider.getTransactionCount(key.address);
      const raw = await signer.signTransaction({
        chainId,
        nonce,
        type: 2,
        to: recipient,
        value: 12345n,
        gasLimit: 21_000,
        ...(await fees()),
      });
      const receipt = await (await ethers.provider.broadcastTransaction(raw)).wait();
      expect(receipt!.status).to.equal(1);
      expect(receipt!.from).to.equal(key.address);
      const mined = await ethers.provider.getTransaction(receipt!.hash);
      expect(mined!.from).to.equal(key.address);
      expect(mined!.type).to.equal(2);
      expect(await ethers.provider.getBalance(recipient)).to.equal(12345n);
    });

    it("a deployment (to: null) signed by the token creates the collection at the address of its sender and nonce", async function () {
      await fund(key.address);
      const factory = await ethers.getContractFactory("NFTCollection");
      const { data } = await factory.getDeployTransaction("Token Drop", "TKN", "ipfs://x/", 0n, 100n, 5n);
      const { chainId } = await ethers.provider.getNetwork();
      const nonce = await ethers.provider.getTransactionCount(key.address);
      const gas = await ethers.provider.estimateGas({ from: key.address, data });
      const raw = await signer.signTransaction({
        chainId,
        nonce,
        to: null,
        data,
        gasLimit: (gas * 12n) / 10n,
        ...(await fees()),
      });
      const receipt = await (await ethers.provider.broadcastTransaction(raw)).wait();
      expect(receipt!.status).to.equal(1);
      expect(receipt!.contractAddress).to.equal(getCreateAddress({ from: key.address, nonce }));
      const collection = factory.attach(receipt!.contractAddress!).connect(ethers.provider) as Awaited<
        ReturnType<typeof factory.deploy>
      >;
      expect(await collection.name()).to.equal("Token Drop");
      expect(await collection.owner()).to.equal(key.address);
    });

    it("a transaction whose from is another address is refused before the token signs", async function () {
      const other = Wallet.createRandom().address;
      let error: unknown;
      try {
        await signer.signTransaction({ chainId: 1n, nonce: 0, from: other, to: other, gasLimit: 21_000, gasPrice: 1n });
      } catch (err) {
        error = err;
      }
      expect(String(error)).to.include("from address mismatch");
    });

    it("more concurrent signatures than sessions all come back, each valid", async function () {
      const digests = Array.from({ length: 40 }, (_, i) => id(`concurrent ${i}`));
      const signatures = await Promise.all(digests.map((digest) => signer.signDigest(digest)));
      signatures.forEach((sig, i) => expect(recoverAddress(digests[i], sig)).to.equal(key.address));
    });

    it("a child process given the token's env (SOFTHSM2_CONF) finds the same key", async function () {
      const program = `
        const { Pkcs11Token } = require("./server/signers/pkcs11");
        (async () => {
          const token = await Pkcs11Token.open({ modulePath: process.env.MODULE, tokenLabel: process.env.LABEL, pin: process.env.PIN });
          const key = await token.findKey("treasury");
          await token.close();
          process.stdout.write(key.address);
        })().catch((err) => { process.stderr.write(String(err)); process.exit(1); });`;
      // Only what the token needs reaches the child: its own environment has no SOFTHSM2_CONF.
      const { SOFTHSM2_CONF: _ours, ...inherited } = process.env;
      const child = spawnSync(process.execPath, ["-r", "ts-node/register/transpile-only", "-e", program], {
        cwd: ROOT,
        encoding: "utf8",
        env: { ...inherited, ...hsm.env, MODULE: hsm.modulePath, LABEL: hsm.tokenLabel, PIN: hsm.pin },
      });
      expect(child.stderr).to.equal("");
      expect(child.stdout).to.equal(key.address);
    });

    it("close waits for the signatures under way; after it, signing is TOKEN_CLOSED", async function () {
      const own = await openToken();
      const ownSigner = await Pkcs11Signer.open(own, "treasury");
      const digests = Array.from({ length: 12 }, (_, i) => id(`closing ${i}`));
      const underWay = digests.map((digest) => ownSigner.signDigest(digest));
      await own.close();
      const signatures = await Promise.all(underWay);
      signatures.forEach((sig, i) => expect(recoverAddress(digests[i], sig)).to.equal(key.address));
      await own.close();
      await failure(ownSigner.signDigest(id("late")), "TOKEN_CLOSED");
      // The shared login of the still-open token is untouched.
      expect(recoverAddress(id("x"), await signer.signDigest(id("x")))).to.equal(key.address);
    });
  });

  describe("a token taken away and put back (issue 35)", function () {
    after(function () {
      if (existsSync(`${hsm.tokenDir}.away`)) renameSync(`${hsm.tokenDir}.away`, hsm.tokenDir);
    });

    it("is not available while away, nor once back in the same login; closed and opened again, it signs", async function () {
      const token = await openToken();
      const key = await token.findKey("treasury");
      expect(await token.available()).to.equal(true);
      renameSync(hsm.tokenDir, `${hsm.tokenDir}.away`);
      expect(await token.available()).to.equal(false);
      await failure(token.signDigest(key, getBytes(id("away"))), "KEY_NOT_FOUND");
      renameSync(`${hsm.tokenDir}.away`, hsm.tokenDir);
      expect(await token.available()).to.equal(false);
      await token.close();
      const again = await openToken();
      try {
        expect(await again.available()).to.equal(true);
        const signer = await Pkcs11Signer.open(again, "treasury");
        expect(recoverAddress(id("back"), await signer.signDigest(id("back")))).to.equal(key.address);
      } finally {
        await again.close();
      }
    });
  });
});
