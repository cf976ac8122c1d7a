/**
 * Drops hardening (issue 47, items 4, 12, 15): what a stranger's batch whitelist costs upstream, the
 * voucher and signature gaps, and the 404 codes of an allowlist or voucher the service does not keep.
 */
import { expect } from "chai";
import { Signature, getAddress, hexlify, randomBytes } from "ethers";
import { expectConfirmedWrite, expectError } from "../api/expectations";
import { ApiClient, ServiceProcess, TEST_API_KEY, collectionAt, sleep } from "../api/harness";
import { nftFixture } from "../api/nft/fixture";

const ROOT = { authorization: `Bearer ${TEST_API_KEY}` };
const randomAddress = () => getAddress(hexlify(randomBytes(20)));

/** How many calls of `method` the service has sent its node so far (GET /metrics). */
async function rpcCalls(api: ApiClient, method: string): Promise<number> {
  const res = await api.request("GET", "/metrics", { headers: ROOT });
  expect(res.status, res.text).to.equal(200);
  const line = res.text.split("\n").find((l) => l.startsWith(`rpc_calls_total{method="${method}",chain="31337"}`));
  return line ? Number(line.split(" ").pop()) : 0;
}

describe("drops hardening: owner first, vouchers, signatures, 404 codes", function () {
  const f = nftFixture();

  describe("POST /nft/addToWhitelist (item 4)", function () {
    it("a key that does not own the collection gets 403 NOT_CONTRACT_OWNER after a few eth_calls, not one per address", async function () {
      this.timeout(120_000);
      const stranger = await f.fundedWallet();
      const addresses = Array.from({ length: 2000 }, randomAddress);
      const before = await rpcCalls(f.api, "eth_call");
      const res = await f.api.post("/nft/addToWhitelist", {
        privateKey: stranger.privateKey,
        contractAddress: f.collection,
        addresses,
      });
      expectError(res, 403, "NOT_CONTRACT_OWNER");
      const calls = (await rpcCalls(f.api, "eth_call")) - before;
      // The owner check, and the collection check on first contact (ERC-165): a handful, whatever the list.
      expect(calls).to.be.below(20);
    });

    it("the owner's list of 250 is read in batches and lists the new ones", async function () {
      this.timeout(120_000);
      const addresses = Array.from({ length: 250 }, randomAddress);
      const whitelist = (list: string[]) =>
        f.api.post("/nft/addToWhitelist", {
          privateKey: f.owner.privateKey,
          contractAddress: f.collection,
          addresses: list,
        });
      const first = await whitelist(addresses.slice(0, 100));
      expect(first.status, first.text).to.equal(200);
      const res = await whitelist(addresses);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.changed).to.equal(true);
      expect(res.body.added).to.deep.equal(addresses.slice(100));
      expect(res.body.alreadyListed).to.deep.equal(addresses.slice(0, 100));
    });
  });

  describe("PUT /collections/{address}/allowlist by a key that does not own the collection (item 3)", function () {
    const entriesOf = (n: number, entry: (i: number) => unknown) => Array.from({ length: n }, (_, i) => entry(i));

    it("100,000 entries are refused 403 NOT_CONTRACT_OWNER before they are checked or hashed, within 3.6 s", async function () {
      this.timeout(120_000);
      const stranger = await f.fundedWallet();
      const put = (entries: unknown[]) =>
        f.api.request("PUT", `/collections/${f.collection}/allowlist`, {
          json: { privateKey: stranger.privateKey, entries },
        });
      // Every entry malformed: the owner is checked first, so this is 403, not 400.
      const malformed = await put(entriesOf(100_000, (i) => ({ address: `0x${i}`, allowance: -1, price: "x" })));
      expectError(malformed, 403, "NOT_CONTRACT_OWNER");
      const valid = entriesOf(100_000, (i) => ({
        address: randomAddress(),
        allowance: String(1 + (i % 5)),
        price: "0",
      }));
      const started = Date.now();
      const res = await put(valid);
      const seconds = (Date.now() - started) / 1000;
      console.log(`      a stranger's PUT of 100,000 entries answered 403 in ${seconds.toFixed(2)} s`);
      expectError(res, 403, "NOT_CONTRACT_OWNER");
      // Measured on 2 cores at load 17: 1.21 s, where e8f77f8 (entries checked and the tree built
      // first) took 39.5 s and 41.9 s at load 18. The bound is 3x the measurement.
      expect(seconds).to.be.below(3.6);
    });
  });

  describe("an allowlist pending beside the one on chain (item 6)", function () {
    // A service of its own on the shared node: an unmined write answers 202 at its TX_TIMEOUT_MS,
    // 10 s here, where the shared service's 30 s made each of these tests wait 30 s for its 202.
    let service: ServiceProcess;
    let api: ApiClient;
    before(async function () {
      this.timeout(120_000);
      service = await ServiceProcess.start({ rpcUrl: f.shared.node.rpcUrl, env: { TX_TIMEOUT_MS: "10000" } });
      api = new ApiClient(service.url);
    });
    after(async function () {
      this.timeout(30_000);
      await service?.stop();
    });
    const list = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ address: randomAddress(), allowance: String(1 + (i % 3)), price: "0" }));
    const put = (entries: unknown[]) =>
      api.request("PUT", `/collections/${f.collection}/allowlist`, {
        json: { privateKey: f.owner.privateKey, entries },
      });
    /** GET …/allowlist once nothing is pending (the follower confirmed what was sent), within 10 s. */
    const settled = async () => {
      let now = await api.get(`/collections/${f.collection}/allowlist`);
      for (let tries = 0; tries < 50 && now.body.pending !== null; tries++) {
        await sleep(200);
        now = await api.get(`/collections/${f.collection}/allowlist`);
      }
      return now;
    };
    /** `account`'s proof is served and verifies against the root on chain; or none is served (404 NOT_ALLOWLISTED). */
    const expectProofServed = async (account: string, served: boolean) => {
      const res = await api.get(`/collections/${f.collection}/allowlist/${account}`);
      if (!served) return void expectError(res, 404, "NOT_ALLOWLISTED");
      expect(res.status, res.text).to.equal(200);
      const nft = collectionAt(f.collection, f.provider);
      await expect(nft.allowlistMint.staticCall(1n, BigInt(res.body.allowance), 0n, res.body.proof, { from: account }))
        .to.not.be.reverted;
    };

    it("a PUT not yet confirmed is shown as pending; proofs stay those of the root on chain until the follower confirms it", async function () {
      this.timeout(180_000);
      const nft = collectionAt(f.collection, f.provider);
      const first = list(20);
      const set = await put(first);
      expect(set.status, set.text).to.equal(200);
      const second = list(30);
      await f.provider.send("evm_setAutomine", [false]);
      let answered;
      try {
        // Unmined: the service answers 202 at its TX_TIMEOUT_MS.
        answered = await put(second);
        expect(answered.status, answered.text).to.equal(202);
        expect(await nft.allowlistRoot()).to.equal(set.body.root);
        const shown = await api.get(`/collections/${f.collection}/allowlist`);
        expect(shown.status, shown.text).to.equal(200);
        expect(shown.body).to.include({ root: set.body.root, entries: 20, operationId: set.body.operationId });
        expect(shown.body.pending).to.include({ entries: 30, operationId: answered.body.operationId });
        expect(shown.body.pending.root).to.not.equal(set.body.root);
        // Proofs of the root on chain: the first list's, and none for an account only on the pending one.
        await expectProofServed(first[0].address, true);
        await expectProofServed(second[0].address, false);
      } finally {
        await f.provider.send("evm_setAutomine", [true]);
      }
      await f.provider.send("evm_mine", []);
      const now = await settled();
      expect(now.body).to.include({ entries: 30, operationId: answered.body.operationId, pending: null });
      expect(now.body.root).to.equal(await nft.allowlistRoot());
      await expectProofServed(second[0].address, true);
      await expectProofServed(first[0].address, false);
    });

    it("two PUTs in flight together: the one the chain applied last is the one in force, whatever order they were answered in", async function () {
      this.timeout(180_000);
      const nft = collectionAt(f.collection, f.provider);
      await f.provider.send("evm_setAutomine", [false]);
      let answers;
      try {
        answers = await Promise.all([put(list(10)), put(list(11))]);
      } finally {
        await f.provider.send("evm_setAutomine", [true]);
      }
      await f.provider.send("evm_mine", []);
      for (const res of answers) expect(res.status, res.text).to.equal(202);
      const now = await settled();
      expect(now.body.root).to.equal(await nft.allowlistRoot());
      expect(now.body.pending).to.equal(null);
    });
  });

  describe("vouchers and signatures (item 12)", function () {
    let collection: string;
    let signerKey: string;

    before(async function () {
      const voucherSigner = await f.fundedWallet();
      signerKey = voucherSigner.privateKey;
      collection = await f.deployThroughApi({ name: "Hardening Drop", voucherSigner: voucherSigner.address });
    });

    it("a voucher for more than maxMintAmountPerTx is refused at creation: 422 INVALID_MINT_AMOUNT", async function () {
      const buyer = randomAddress();
      const res = await f.api.post(`/collections/${collection}/vouchers`, {
        privateKey: signerKey,
        to: buyer,
        amount: "11",
        price: "0",
      });
      const body = expectError(res, 422, "INVALID_MINT_AMOUNT");
      expect(body.message).to.include("maxMintAmountPerTx (10)");
      const ok = await f.api.post(`/collections/${collection}/vouchers`, {
        privateKey: signerKey,
        to: buyer,
        amount: "10",
        price: "0",
      });
      expect(ok.status, ok.text).to.equal(200);
    });

    it("a compact 64-byte EIP-2098 signature redeems the voucher, as its 65-byte form would", async function () {
      this.timeout(60_000);
      const buyer = await f.fundedWallet();
      const made = await f.api.post(`/collections/${collection}/vouchers`, {
        privateKey: signerKey,
        to: buyer.address,
        amount: "2",
        price: "1000",
      });
      expect(made.status, made.text).to.equal(200);
      const compact = Signature.from(made.body.signature).compactSerialized;
      expect(compact).to.have.length(2 + 128);
      const res = await f.api.post("/nft/mintWithVoucher", {
        privateKey: buyer.privateKey,
        contractAddress: collection,
        voucher: made.body.voucher,
        signature: compact,
      });
      await expectConfirmedWrite(res, f.provider, {
        from: buyer.address,
        contractAddress: collection,
        extra: ["tokenIds", "value", "voucherId"],
      });
      expect(res.body.value).to.equal("2000");
    });
  });

  describe("404 codes of the drop reads (item 15)", function () {
    it("GET …/allowlist of a collection without one is 404 ALLOWLIST_NOT_FOUND, naming how to set one", async function () {
      const bare = await f.deployThroughApi();
      const res = await f.api.get(`/collections/${bare}/allowlist`);
      const body = expectError(res, 404, "ALLOWLIST_NOT_FOUND");
      expect(body.message).to.include(`PUT /collections/${bare}/allowlist`);
    });

    it("GET …/vouchers/{id} of a voucher the service did not sign is 404 VOUCHER_NOT_FOUND", async function () {
      const res = await f.api.get(`/collections/${f.collection}/vouchers/${hexlify(randomBytes(32))}`);
      expectError(res, 404, "VOUCHER_NOT_FOUND");
    });
  });
});
