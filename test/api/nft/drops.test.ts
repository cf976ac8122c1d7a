import { expect } from "chai";
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { Wallet, getAddress, hexlify, id as hashOf, parseEther, randomBytes, type Contract } from "ethers";
import { expectConfirmedWrite, expectError } from "../expectations";
import { collectionAt, sleep } from "../harness";
import { nftFixture } from "./fixture";

const LEAF_TYPES = ["address", "uint256", "uint256"];
const randomAddress = () => getAddress(hexlify(randomBytes(20)));

describe("Drops through the API: airdrops, batch whitelist, allowlists, vouchers, royalties", function () {
  const f = nftFixture();
  let nft: Contract;

  before(async function () {
    nft = collectionAt(f.collection, f.provider);
  });

  describe("POST /nft/airdrop", function () {
    it("mints to 200 recipients in one transaction, each balance checked on chain", async function () {
      this.timeout(300_000);
      const recipients = Array.from({ length: 200 }, (_, i) => ({ address: randomAddress(), amount: i % 2 ? "2" : 1 }));
      const res = await f.api.post("/nft/airdrop", {
        privateKey: f.owner.privateKey,
        contractAddress: f.collection,
        recipients,
      });
      await expectConfirmedWrite(res, f.provider, {
        from: f.owner.address,
        contractAddress: f.collection,
        extra: ["recipients"],
      });
      expect(res.body.recipients).to.have.length(200);
      expect(res.body.recipients[1].tokenIds).to.have.length(2);
      const balances = await Promise.all(recipients.map((r) => nft.balanceOf(r.address) as Promise<bigint>));
      balances.forEach((balance, i) => expect(balance).to.equal(BigInt(recipients[i].amount)));
      expect(await nft.ownerOf(BigInt(res.body.recipients[199].tokenIds[0]))).to.equal(recipients[199].address);
    });

    it("a list too large for one transaction answers 413 TOO_LARGE_FOR_ONE_TRANSACTION naming how many fit", async function () {
      this.timeout(300_000);
      const recipients = Array.from({ length: 1000 }, () => ({ address: randomAddress(), amount: "1" }));
      const res = await f.api.post("/nft/airdrop", {
        privateKey: f.owner.privateKey,
        contractAddress: f.collection,
        recipients,
      });
      const body = expectError(res, 413, "TOO_LARGE_FOR_ONE_TRANSACTION");
      const fit = Number(/: (\d+) fit/.exec(body.message)?.[1]);
      expect(fit).to.be.within(100, 999);
      expect(body.details[0]).to.deep.equal({
        path: "recipients",
        message: `at most ${fit} fit in one transaction`,
      });
    });

    it("by another key answers 403 NOT_CONTRACT_OWNER; an unknown field 400 naming it", async function () {
      const stranger = await f.fundedWallet();
      const recipients = [{ address: randomAddress(), amount: "1" }];
      expectError(
        await f.api.post("/nft/airdrop", {
          privateKey: stranger.privateKey,
          contractAddress: f.collection,
          recipients,
        }),
        403,
        "NOT_CONTRACT_OWNER",
      );
      const res = await f.api.post("/nft/airdrop", {
        privateKey: f.owner.privateKey,
        contractAddress: f.collection,
        recipients,
        gasLimit: 1,
      });
      expect(JSON.stringify(expectError(res, 400, "VALIDATION_ERROR"))).to.include("gasLimit");
    });
  });

  describe("POST /nft/addToWhitelist", function () {
    it("lists the new addresses in one transaction and names those already listed", async function () {
      const [a, b, c] = [randomAddress(), randomAddress(), randomAddress()];
      await f.api.post("/nft/addUserAddressToWhitelist", {
        privateKey: f.owner.privateKey,
        contractAddress: f.collection,
        address: b,
      });
      const res = await f.api.post("/nft/addToWhitelist", {
        privateKey: f.owner.privateKey,
        contractAddress: f.collection,
        addresses: [a, b, c],
      });
      await expectConfirmedWrite(res, f.provider, {
        from: f.owner.address,
        contractAddress: f.collection,
        extra: ["added", "alreadyListed", "changed"],
      });
      expect(res.body.added).to.deep.equal([a, c]);
      expect(res.body.alreadyListed).to.deep.equal([b]);
      for (const account of [a, b, c]) expect(await nft.whitelisted(account)).to.equal(true);
      const again = await f.api.post("/nft/addToWhitelist", {
        privateKey: f.owner.privateKey,
        contractAddress: f.collection,
        addresses: [a],
      });
      expect(again.status, again.text).to.equal(200);
      expect(again.body).to.include({ changed: false });
      expect(again.body).to.not.have.property("transactionHash");
    });
  });

  describe("allowlists", function () {
    let buyer: Wallet;
    let entries: [string, string, string][];

    before(async function () {
      buyer = await f.fundedWallet();
      entries = [
        [buyer.address, "2", parseEther("0.001").toString()],
        ...Array.from({ length: 99 }, () => [randomAddress(), "1", "0"] as [string, string, string]),
      ];
    });

    it("PUT builds the tree, keeps it and sets its root on chain: the root of StandardMerkleTree", async function () {
      const tree = StandardMerkleTree.of(entries, LEAF_TYPES);
      const res = await f.api.request("PUT", `/collections/${f.collection}/allowlist`, {
        json: {
          privateKey: f.owner.privateKey,
          entries: entries.map(([address, allowance, price]) => ({ address, allowance, price })),
        },
      });
      await expectConfirmedWrite(res, f.provider, {
        from: f.owner.address,
        contractAddress: f.collection,
        extra: ["root", "entries", "changed"],
      });
      expect(res.body.root).to.equal(tree.root);
      expect(res.body.entries).to.equal(100);
      expect(await nft.allowlistRoot()).to.equal(tree.root);
      const list = await f.api.get(`/collections/${f.collection}/allowlist`);
      expect(list.body).to.include({ root: tree.root, entries: 100, operationId: res.body.operationId });
    });

    it("GET …/allowlist/{account} answers the proof StandardMerkleTree makes, and 404 NOT_ALLOWLISTED for another", async function () {
      const tree = StandardMerkleTree.of(entries, LEAF_TYPES);
      const res = await f.api.get(`/collections/${f.collection}/allowlist/${buyer.address}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({
        account: buyer.address,
        allowance: "2",
        price: parseEther("0.001").toString(),
        minted: "0",
        remaining: "2",
        proof: tree.getProof(0),
      });
      expectError(await f.api.get(`/collections/${f.collection}/allowlist/${randomAddress()}`), 404, "NOT_ALLOWLISTED");
    });

    it("allowlistMint mints with the stored proof; past the allowance 409 ALLOWANCE_EXCEEDED; off the list 403 NOT_ALLOWLISTED", async function () {
      const mint = (key: string, mintAmount: number) =>
        f.api.post("/nft/allowlistMint", { privateKey: key, contractAddress: f.collection, mintAmount });
      const res = await mint(buyer.privateKey, 1);
      await expectConfirmedWrite(res, f.provider, {
        from: buyer.address,
        contractAddress: f.collection,
        extra: ["tokenIds", "value"],
      });
      expect(res.body.value).to.equal(parseEther("0.001").toString());
      expectError(await mint(buyer.privateKey, 2), 409, "ALLOWANCE_EXCEEDED");
      expect((await mint(buyer.privateKey, 1)).status).to.equal(200);
      expectError(await mint(buyer.privateKey, 1), 409, "ALLOWANCE_EXCEEDED");
      const entry = await f.api.get(`/collections/${f.collection}/allowlist/${buyer.address}`);
      expect(entry.body).to.include({ minted: "2", remaining: "0" });
      const stranger = await f.fundedWallet();
      expectError(await mint(stranger.privateKey, 1), 403, "NOT_ALLOWLISTED");
    });

    it("on chain, a wrong proof and a wrong allowance are each refused NotAllowlisted", async function () {
      const tree = StandardMerkleTree.of(entries, LEAF_TYPES);
      const [, other] = entries;
      const asOther = { from: other[0] };
      await expect(nft.allowlistMint.staticCall(1n, 1n, 0n, tree.getProof(1), asOther)).to.not.be.reverted;
      await expect(nft.allowlistMint.staticCall(1n, 1n, 0n, tree.getProof(2), asOther)).to.be.revertedWithCustomError(
        nft,
        "NotAllowlisted",
      );
      await expect(nft.allowlistMint.staticCall(1n, 5n, 0n, tree.getProof(1), asOther)).to.be.revertedWithCustomError(
        nft,
        "NotAllowlisted",
      );
    });

    it("PUT with bad entries is 400 VALIDATION_ERROR naming each bad row and field, and sends nothing", async function () {
      const good = randomAddress();
      const letter = [...good].findIndex((c, i) => i > 1 && /[a-fA-F]/.test(c));
      const flipped =
        good[letter] === good[letter].toLowerCase() ? good[letter].toUpperCase() : good[letter].toLowerCase();
      const wrongChecksum = good.slice(0, letter) + flipped + good.slice(letter + 1);
      const rootBefore = await nft.allowlistRoot();
      const res = await f.api.request("PUT", `/collections/${f.collection}/allowlist`, {
        json: {
          privateKey: f.owner.privateKey,
          entries: [
            { address: good, allowance: "1", price: "0" },
            { address: "0x1234", allowance: 1, price: 0 },
            { address: randomAddress(), allowance: -1, price: "1.5" },
            { address: good.toLowerCase(), allowance: 1, price: 0 },
            { address: randomAddress(), allowance: 1, price: 0, note: "x" },
            "not an entry",
          ],
        },
      });
      const body = expectError(res, 400, "VALIDATION_ERROR");
      expect(body.details).to.deep.equal([
        { path: "entries.1.address", message: "address must be a 20-byte hex address (0x…)" },
        { path: "entries.2.allowance", message: "allowance must be ≥ 0" },
        { path: "entries.2.price", message: "price must be a non-negative decimal integer" },
        { path: "entries.3.address", message: "listed twice: the same address as entries.0" },
        { path: "entries.4.note", message: "unknown field" },
        { path: "entries.5", message: "each entry must be an object {address, allowance, price}" },
      ]);
      const checksum = await f.api.request("PUT", `/collections/${f.collection}/allowlist`, {
        json: { privateKey: f.owner.privateKey, entries: [{ address: wrongChecksum, allowance: 1, price: 0 }] },
      });
      expect(expectError(checksum, 400, "VALIDATION_ERROR").details).to.deep.equal([
        { path: "entries.0.address", message: "address must be checksummed (EIP-55) if mixed-case" },
      ]);
      // The path names the collection: a body naming another is refused, the same one (any case) is not.
      const other = randomAddress();
      const elsewhere = await f.api.request("PUT", `/collections/${f.collection}/allowlist`, {
        json: {
          privateKey: f.owner.privateKey,
          contractAddress: other,
          entries: [{ address: good, allowance: 1, price: 0 }],
        },
      });
      expect(expectError(elsewhere, 400, "VALIDATION_ERROR").details).to.deep.equal([
        { path: "contractAddress", message: `not the path's {address} (${f.collection}); leave it out` },
      ]);
      expect(await nft.allowlistRoot()).to.equal(rootBefore);
    });

    it("PUT of 100,000 entries, then proofs of entries sampled across it verify on chain", async function () {
      this.timeout(600_000);
      const big = Array.from({ length: 100_000 }, (_, i) => ({
        address: randomAddress(),
        allowance: String(1 + (i % 5)),
        price: "0",
      }));
      const started = Date.now();
      const res = await f.api.request("PUT", `/collections/${f.collection}/allowlist`, {
        json: { privateKey: f.owner.privateKey, entries: big },
      });
      console.log(`      PUT of 100,000 entries answered in ${Date.now() - started} ms`);
      expect(res.status, res.text).to.equal(200);
      expect(await nft.allowlistRoot()).to.equal(res.body.root);
      for (const i of [0, 1, 4_999, 33_333, 50_000, 77_777, 99_998, 99_999]) {
        const entry = await f.api.get(`/collections/${f.collection}/allowlist/${big[i].address}`);
        expect(entry.status, entry.text).to.equal(200);
        expect(entry.body.proof.length).to.be.within(16, 17); // 2n - 1 nodes: leaves sit at two depths
        await expect(
          nft.allowlistMint.staticCall(1n, BigInt(big[i].allowance), 0n, entry.body.proof, { from: big[i].address }),
        ).to.not.be.reverted;
      }
    });
  });

  describe("vouchers (signed by a request key; held wallets: test/drops/voucher-wallets.test.ts)", function () {
    let voucherSigner: Wallet;
    let voucherCollection: string;
    let buyer: Wallet;
    const sign = (fields: Record<string, unknown>) =>
      f.api.post(`/collections/${voucherCollection}/vouchers`, {
        privateKey: voucherSigner.privateKey,
        to: buyer.address,
        amount: "2",
        price: parseEther("0.002").toString(),
        ...fields,
      });
    const redeem = (key: string, voucher: unknown, signature: string) =>
      f.api.post("/nft/mintWithVoucher", { privateKey: key, contractAddress: voucherCollection, voucher, signature });

    before(async function () {
      [voucherSigner, buyer] = await Promise.all([f.fundedWallet(), f.fundedWallet()]);
      voucherCollection = await f.deployThroughApi({
        name: "Voucher Drop",
        voucherSigner: voucherSigner.address,
        royaltyReceiver: f.owner.address,
        royaltyBps: 500,
      });
    });

    it("deploy sets the voucher signer and the royalty (ERC-2981)", async function () {
      const deployed = collectionAt(voucherCollection, f.provider);
      expect(await deployed.voucherSigner()).to.equal(voucherSigner.address);
      expect(await deployed.royaltyInfo(1n, 10_000n)).to.deep.equal([f.owner.address, 500n]);
    });

    it("a voucher is redeemed by its buyer, who pays; the same id again is 409 VOUCHER_USED; GET shows it used", async function () {
      const made = await sign({});
      expect(made.status, made.text).to.equal(200);
      expect(made.body.typedData.primaryType).to.equal("Voucher");
      const unused = await f.api.get(`/collections/${voucherCollection}/vouchers/${made.body.voucher.id}`);
      expect(unused.body.state).to.equal("unused");
      const res = await redeem(buyer.privateKey, made.body.voucher, made.body.signature);
      await expectConfirmedWrite(res, f.provider, {
        from: buyer.address,
        contractAddress: voucherCollection,
        extra: ["tokenIds", "value", "voucherId"],
      });
      expect(res.body.tokenIds).to.have.length(2);
      expect(res.body.value).to.equal(parseEther("0.004").toString());
      expectError(await redeem(buyer.privateKey, made.body.voucher, made.body.signature), 409, "VOUCHER_USED");
      const state = await f.api.get(`/collections/${voucherCollection}/vouchers/${made.body.voucher.id}`);
      expect(state.body).to.include({ state: "used", transactionHash: res.body.transactionHash });
    });

    it("a voucher signed by another key is 403 VOUCHER_INVALID; one redeemed by another address too", async function () {
      const made = await sign({});
      const { domain, types, message } = made.body.typedData;
      delete types.EIP712Domain;
      const forged = await buyer.signTypedData(domain, types, message);
      expectError(await redeem(buyer.privateKey, made.body.voucher, forged), 403, "VOUCHER_INVALID");
      const other = await f.fundedWallet();
      expectError(await redeem(other.privateKey, made.body.voucher, made.body.signature), 403, "VOUCHER_INVALID");
      const stranger = await f.fundedWallet();
      const res = await f.api.post(`/collections/${voucherCollection}/vouchers`, {
        privateKey: stranger.privateKey,
        to: buyer.address,
        amount: 1,
        price: 0,
      });
      expectError(res, 403, "VOUCHER_INVALID");
    });

    it("an expired voucher is 409 VOUCHER_EXPIRED, and GET shows it expired", async function () {
      const made = await sign({ validFor: 1 });
      await sleep(2500);
      await (await f.owner.connect(f.provider).sendTransaction({ to: f.owner.address, value: 0n })).wait();
      expectError(await redeem(buyer.privateKey, made.body.voucher, made.body.signature), 409, "VOUCHER_EXPIRED");
      const state = await f.api.get(`/collections/${voucherCollection}/vouchers/${made.body.voucher.id}`);
      expect(state.body.state).to.equal("expired");
    });

    it("the typedData answered, signed with ethers' signTypedData, gives the service's signature", async function () {
      const made = await sign({ id: hashOf("keyed-1"), amount: 1, price: 0 });
      expect(made.status, made.text).to.equal(200);
      const { domain, types, message } = made.body.typedData;
      delete types.EIP712Domain;
      expect(await voucherSigner.signTypedData(domain, types, message)).to.equal(made.body.signature);
      expect(made.body.voucher.id).to.equal(hashOf("keyed-1"));
    });
  });

  describe("POST /nft/setRoyalty", function () {
    it("sets the royalty read by royaltyInfo; the same again changes nothing; above 1000 bps is 400", async function () {
      const receiver = randomAddress();
      const body = { privateKey: f.owner.privateKey, contractAddress: f.collection, receiver, bps: 250 };
      const res = await f.api.post("/nft/setRoyalty", body);
      await expectConfirmedWrite(res, f.provider, {
        from: f.owner.address,
        contractAddress: f.collection,
        extra: ["receiver", "bps", "changed"],
      });
      expect(await nft.royaltyInfo(1n, 10_000n)).to.deep.equal([receiver, 250n]);
      expect((await f.api.post("/nft/setRoyalty", body)).body).to.include({ changed: false });
      expectError(await f.api.post("/nft/setRoyalty", { ...body, bps: 1001 }), 400, "VALIDATION_ERROR");
    });
  });
});
