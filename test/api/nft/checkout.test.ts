import { expect } from "chai";
import { Contract, Wallet, ZeroAddress, getAddress } from "ethers";
import { editionsInterface } from "../../../server/chain/editions";
import { expectConfirmedWrite, expectError, expectNoGasSpent } from "../expectations";
import { TEST_API_KEY, collectionAt, freshWallet, type ApiResponse, type JsonBody } from "../harness";
import { deployToken, signCheckout } from "./checkout-helpers";
import { describeSecrets, nftFixture } from "./fixture";

/** 2.5 TUSD (6 decimals), the price of one token. */
const COST = 2_500_000n;
const TUSD = 1_000_000n;

// On the shared `hardhat node`, and on Foundry's anvil: another node's error shapes, the same answers.
for (const chain of ["hardhat", "anvil"] as const) {
  describe(`Checkout: prices in an ERC-20, buyers who hold no ETH (${chain === "anvil" ? "anvil" : "hardhat node"})`, function () {
    const f = nftFixture({ collection: false, chain });
    let tusd: Contract;
    let collection: string;
    /** Mints by approval. */
    let payer: Wallet;
    /** Sends mintWithPermit and pays its gas. */
    let sender: Wallet;
    /** Holds TUSD and no ETH. */
    let buyer: Wallet;
    let collected = 0n;

    before(async function () {
      this.timeout(60_000);
      [payer, sender] = await Promise.all([f.fundedWallet(), f.fundedWallet()]);
      const owner = f.owner.connect(f.provider);
      tusd = await deployToken(owner, "TestUSD");
      collection = await f.deployThroughApi({ cost: COST.toString() });
      buyer = freshWallet();
      await (await tusd.connect(owner).getFunction("mint")(buyer.address, 10n * TUSD)).wait();
    });

    const post = (route: string, body: JsonBody, headers?: Record<string, string>) =>
      f.api.post(`/nft/${route}`, body, headers);
    const tokenAddress = () => tusd.getAddress();
    const checkout = (fields: JsonBody = {}, contractAddress = collection) =>
      post("checkout", { contractAddress, buyer: buyer.address, mintAmount: 2, ...fields });
    const mintWithPermit = (fields: JsonBody, key = sender.privateKey, contractAddress = collection) =>
      post("mintWithPermit", { privateKey: key, contractAddress, buyer: buyer.address, mintAmount: 2, ...fields });
    const setPaymentToken = (paymentToken: string, contractAddress = collection) =>
      post("setPaymentToken", { privateKey: f.owner.privateKey, contractAddress, paymentToken });

    /**
     * `minter` approves two tokens' price and mints them on `at`: confirmed, value 0 sent, the price
     * answered in TUSD units with the token. Answers the mint's answer.
     */
    async function approveAndMint(minter: Wallet, at: string): Promise<ApiResponse> {
      await (await tusd.connect(minter.connect(f.provider)).getFunction("approve")(at, COST * 2n)).wait();
      const res = await f.mint(minter.privateKey, at, 2);
      await expectConfirmedWrite(res, f.provider, {
        from: minter.address,
        contractAddress: at,
        extra: ["tokenIds", "value", "paymentToken"],
      });
      expect(res.body.value).to.equal((COST * 2n).toString());
      expect(res.body.paymentToken).to.deep.equal({ address: await tokenAddress(), symbol: "TUSD", decimals: 6 });
      expect((await f.provider.getTransaction(res.body.transactionHash as string))!.value).to.equal(0n);
      return res;
    }

    describe("setPaymentToken", function () {
      it("sets the token (changed:true); total-supply then shows it; the same token again sends nothing (changed:false)", async function () {
        const res = await setPaymentToken(await tokenAddress());
        await expectConfirmedWrite(res, f.provider, {
          from: f.owner.address,
          contractAddress: collection,
          extra: ["paymentToken", "changed"],
        });
        expect(res.body).to.include({ paymentToken: await tokenAddress(), changed: true });
        const supply = await post("total-supply", { privateKey: payer.privateKey, contractAddress: collection });
        expect(supply.status, supply.text).to.equal(200);
        expect(supply.body.paymentToken).to.deep.equal({ address: await tokenAddress(), symbol: "TUSD", decimals: 6 });
        const token = await tokenAddress();
        const again = await expectNoGasSpent(f.provider, f.owner.address, () => setPaymentToken(token));
        expect(again.status, again.text).to.equal(200);
        expect(again.body.changed).to.equal(false);
      });
    });

    describe("deploy with paymentToken", function () {
      /** A collection deployed priced in TUSD from its first block. */
      let priced: string;
      const tusdView = async () => ({ address: await tokenAddress(), symbol: "TUSD", decimals: 6 });

      it("answers 201 with paymentToken {address, symbol, decimals}; the constructor set it (PaymentTokenChanged in the deploy)", async function () {
        const res = await post("deploy", {
          privateKey: f.owner.privateKey,
          cost: COST.toString(),
          paymentToken: await tokenAddress(),
        });
        const receipt = await expectConfirmedWrite(res, f.provider, {
          status: 201,
          from: f.owner.address,
          contractAddress: res.body.contractAddress ?? ZeroAddress,
          extra: ["owner", "paymentToken"],
        });
        expect(res.body.paymentToken).to.deep.equal(await tusdView());
        priced = res.body.contractAddress as string;
        const nft = collectionAt(priced, f.provider);
        expect(await nft.paymentToken()).to.equal(await tokenAddress());
        const changed = receipt.logs
          .filter((log) => getAddress(log.address) === priced)
          .map((log) => nft.interface.parseLog(log)?.name);
        expect(changed).to.include("PaymentTokenChanged");
      });

      it("POST /nft/total-supply shows it", async function () {
        const supply = await post("total-supply", { privateKey: payer.privateKey, contractAddress: priced });
        expect(supply.status, supply.text).to.equal(200);
        expect(supply.body.paymentToken).to.deep.equal(await tusdView());
      });

      it("a mint by approval pays in the token: value 0 sent, the price in TUSD units, paymentToken answered", async function () {
        const minter = (await f.fundedWallet()).connect(f.provider);
        await (await tusd.connect(f.owner.connect(f.provider)).getFunction("mint")(minter.address, 10n * TUSD)).wait();
        const unapproved = await expectNoGasSpent(f.provider, minter.address, () =>
          f.mint(minter.privateKey, priced, 2),
        );
        expectError(unapproved, 409, "TOKEN_ALLOWANCE_TOO_LOW");
        await approveAndMint(minter, priced);
        expect(await tusd.getFunction("balanceOf")(priced)).to.equal(COST * 2n);
        expect(await tusd.getFunction("balanceOf")(minter.address)).to.equal(10n * TUSD - COST * 2n);
      });

      it("?dryRun=true plans it: the result carries paymentToken, the call's data carries the token; nothing sent", async function () {
        const token = await tokenAddress();
        const res = await expectNoGasSpent(f.provider, f.owner.address, () =>
          post("deploy?dryRun=true", { privateKey: f.owner.privateKey, paymentToken: token }),
        );
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.include({ dryRun: true, operation: "deploy", changed: true });
        expect(res.body.result).to.deep.equal({ paymentToken: await tusdView() });
        // The token is the constructor's last (static) argument: its word is in the call's data.
        expect((res.body.call.data as string).toLowerCase()).to.include(token.slice(2).toLowerCase().padStart(64, "0"));
      });

      it("the zero address is the native coin: no paymentToken answered, total-supply shows none", async function () {
        const res = await post("deploy", { privateKey: f.owner.privateKey, paymentToken: ZeroAddress });
        expect(res.status, res.text).to.equal(201);
        expect(res.body).to.not.have.property("paymentToken");
        const supply = await post("total-supply", {
          privateKey: payer.privateKey,
          contractAddress: res.body.contractAddress,
        });
        expect(supply.status, supply.text).to.equal(200);
        expect(supply.body).to.not.have.property("paymentToken");
      });

      it('with "standard":"erc1155": answers standard and paymentToken; an edition\'s cost is then in the token', async function () {
        const res = await post("deploy", {
          privateKey: f.owner.privateKey,
          standard: "erc1155",
          paymentToken: await tokenAddress(),
        });
        await expectConfirmedWrite(res, f.provider, {
          status: 201,
          from: f.owner.address,
          contractAddress: res.body.contractAddress ?? ZeroAddress,
          extra: ["owner", "standard", "paymentToken"],
        });
        expect(res.body.standard).to.equal("erc1155");
        expect(res.body.paymentToken).to.deep.equal(await tusdView());
        const editions = res.body.contractAddress as string;
        expect(await new Contract(editions, editionsInterface(), f.provider).paymentToken()).to.equal(
          await tokenAddress(),
        );
        const created = await post("createEdition", {
          privateKey: f.owner.privateKey,
          contractAddress: editions,
          cost: COST.toString(),
          maxSupply: "10",
          maxMintAmountPerTx: "5",
        });
        expect(created.status, created.text).to.equal(200);
        const minter = (await f.fundedWallet()).connect(f.provider);
        await (await tusd.connect(f.owner.connect(f.provider)).getFunction("mint")(minter.address, 10n * TUSD)).wait();
        await (await tusd.connect(minter).getFunction("approve")(editions, COST)).wait();
        const minted = await post("mint", {
          privateKey: minter.privateKey,
          contractAddress: editions,
          tokenId: created.body.tokenId,
          mintAmount: 1,
        });
        expect(minted.status, minted.text).to.equal(200);
        expect(minted.body).to.include({ value: COST.toString() });
        expect(minted.body.paymentToken).to.deep.equal(await tusdView());
        expect(await tusd.getFunction("balanceOf")(editions)).to.equal(COST);
      });

      it("a paymentToken that is no contract (an EOA): 400 VALIDATION_ERROR naming paymentToken, nothing sent (nonce unchanged)", async function () {
        const eoa = freshWallet().address;
        for (const standard of ["erc721", "erc1155"]) {
          const res = await expectNoGasSpent(f.provider, f.owner.address, () =>
            post("deploy", { privateKey: f.owner.privateKey, standard, paymentToken: eoa }),
          );
          const error = expectError(res, 400, "VALIDATION_ERROR");
          expect(error.details[0].path).to.equal("paymentToken");
          expect(error.details[0].message).to.include("not a contract");
        }
      });

      it("a paymentToken that is a contract but no ERC-20 (a collection): 400 VALIDATION_ERROR naming paymentToken and decimals(), nothing sent, the dry run too", async function () {
        for (const path of ["deploy", "deploy?dryRun=true"]) {
          const res = await expectNoGasSpent(f.provider, f.owner.address, () =>
            post(path, { privateKey: f.owner.privateKey, paymentToken: collection }),
          );
          const error = expectError(res, 400, "VALIDATION_ERROR");
          expect(error.details[0].path).to.equal("paymentToken");
          expect(error.details[0].message).to.include("decimals()");
        }
      });
    });

    describe("mint by approval", function () {
      it("a payer without the token: 402 INSUFFICIENT_TOKEN_BALANCE, nothing sent", async function () {
        const res = await expectNoGasSpent(f.provider, payer.address, () => f.mint(payer.privateKey, collection, 2));
        expectError(res, 402, "INSUFFICIENT_TOKEN_BALANCE");
      });

      it("with the token but no approval: 409 TOKEN_ALLOWANCE_TOO_LOW naming the spender and the amount, nothing sent", async function () {
        await (await tusd.connect(f.owner.connect(f.provider)).getFunction("mint")(payer.address, 10n * TUSD)).wait();
        const res = await expectNoGasSpent(f.provider, payer.address, () => f.mint(payer.privateKey, collection, 2));
        const error = expectError(res, 409, "TOKEN_ALLOWANCE_TOO_LOW");
        expect(error.details).to.deep.include({ path: "spender", message: collection });
        expect(error.details).to.deep.include({ path: "amount", message: (COST * 2n).toString() });
      });

      it("approved: mints with value 0, answers value in TUSD units and paymentToken; the collection holds the price", async function () {
        await approveAndMint(payer, collection);
        collected += COST * 2n;
        expect(await tusd.getFunction("balanceOf")(collection)).to.equal(collected);
      });
    });

    describe("checkout, then mintWithPermit", function () {
      let typed: ApiResponse;

      it("checkout answers the permit's typed data: domain, types, primaryType, message (price, nonce, deadline)", async function () {
        typed = await checkout();
        expect(typed.status, typed.text).to.equal(200);
        const body = typed.body;
        expect(body.primaryType).to.equal("Permit");
        expect(body.domain).to.deep.equal({
          name: "Test USD",
          version: "1",
          chainId: "31337",
          verifyingContract: await tokenAddress(),
        });
        expect(Object.keys(body.types as object)).to.have.members(["EIP712Domain", "Permit"]);
        expect(body.message).to.include({
          owner: buyer.address,
          spender: collection,
          value: (COST * 2n).toString(),
          nonce: "0",
        });
        // 30 minutes from the later of the clock and the chain's head (a busy dev chain runs ahead of the clock).
        const head = (await f.provider.getBlock("latest"))!.timestamp;
        const now = Math.max(Math.floor(Date.now() / 1000), head);
        expect(Number(body.message.deadline) - now).to.be.within(30 * 60 - 30, 30 * 60 + 30);
        expect(body.paymentToken.symbol).to.equal("TUSD");
      });

      it("a signature by another key: 400 INVALID_SIGNATURE, nothing sent", async function () {
        const forged = await signCheckout(freshWallet(), typed.body);
        const res = await expectNoGasSpent(f.provider, sender.address, () =>
          mintWithPermit({ deadline: typed.body.message.deadline, signature: forged }),
        );
        expectError(res, 400, "INVALID_SIGNATURE");
      });

      it("a deadline already past: 400 PERMIT_EXPIRED, nothing sent (checkout refuses one too)", async function () {
        const past = String(Math.floor(Date.now() / 1000) - 60);
        const signature = await signCheckout(buyer, typed.body, { ...typed.body.message, deadline: past });
        const res = await expectNoGasSpent(f.provider, sender.address, () =>
          mintWithPermit({ deadline: past, signature }),
        );
        expectError(res, 400, "PERMIT_EXPIRED");
        expectError(await checkout({ deadline: past }), 400, "PERMIT_EXPIRED");
      });

      it("the buyer's signature, sent by a funded key: the buyer owns the tokens, paid the price, and still holds 0 ETH", async function () {
        const signature = await signCheckout(buyer, typed.body);
        const res = await mintWithPermit({ deadline: typed.body.message.deadline, signature });
        await expectConfirmedWrite(res, f.provider, {
          from: sender.address,
          contractAddress: collection,
          extra: ["buyer", "tokenIds", "value", "paymentToken"],
        });
        expect(res.body).to.include({ buyer: buyer.address, value: (COST * 2n).toString() });
        const nft = collectionAt(collection, f.provider);
        for (const id of res.body.tokenIds as string[]) expect(await nft.ownerOf(id)).to.equal(buyer.address);
        expect(res.body.tokenIds).to.have.length(2);
        expect(await f.provider.getBalance(buyer.address)).to.equal(0n);
        expect(await tusd.getFunction("balanceOf")(buyer.address)).to.equal(10n * TUSD - COST * 2n);
        collected += COST * 2n;
      });

      it("the same signature again (its allowance spent): 400 INVALID_SIGNATURE naming the nonce, nothing sent", async function () {
        const signature = await signCheckout(buyer, typed.body);
        const res = await expectNoGasSpent(f.provider, sender.address, () =>
          mintWithPermit({ deadline: typed.body.message.deadline, signature }),
        );
        const error = expectError(res, 400, "INVALID_SIGNATURE");
        expect(error.message).to.include("nonce");
      });

      it("a buyer short of the price: 402 INSUFFICIENT_TOKEN_BALANCE, nothing sent", async function () {
        const poor = freshWallet();
        await (await tusd.connect(f.owner.connect(f.provider)).getFunction("mint")(poor.address, COST)).wait();
        const body = (await checkout({ buyer: poor.address })).body;
        const signature = await signCheckout(poor, body);
        const res = await expectNoGasSpent(f.provider, sender.address, () =>
          mintWithPermit({ buyer: poor.address, deadline: body.message.deadline, signature }),
        );
        expectError(res, 402, "INSUFFICIENT_TOKEN_BALANCE");
      });
    });

    describe("refusals of the collection or its token", function () {
      it("a collection priced in the native coin: 400 VALIDATION_ERROR naming paymentToken", async function () {
        const native = await f.deployThroughApi({ cost: "1000" });
        const error = expectError(await checkout({}, native), 400, "VALIDATION_ERROR");
        expect(error.details[0].path).to.equal("paymentToken");
      });

      it("a token without permit (PlainERC20): 422 PERMIT_UNSUPPORTED from checkout and mintWithPermit, nothing sent", async function () {
        const plain = await deployToken(f.owner.connect(f.provider), "PlainERC20");
        const priced = await f.deployThroughApi({ cost: COST.toString() });
        const set = await setPaymentToken(await plain.getAddress(), priced);
        expect(set.status, set.text).to.equal(200);
        expectError(await checkout({}, priced), 422, "PERMIT_UNSUPPORTED");
        const deadline = String(Math.floor(Date.now() / 1000) + 365 * 24 * 3600);
        const signature = `0x${"11".repeat(65)}`;
        const res = await expectNoGasSpent(f.provider, sender.address, () =>
          mintWithPermit({ deadline, signature }, sender.privateKey, priced),
        );
        expectError(res, 422, "PERMIT_UNSUPPORTED");
      });
    });

    describe("withdraw and the index", function () {
      it("GET /collections/{address} shows the payment token", async function () {
        let res = await f.api.get(`/collections/${collection}`);
        for (let i = 0; i < 20 && res.status === 503; i++) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          res = await f.api.get(`/collections/${collection}`);
        }
        expect(res.status, res.text).to.equal(200);
        expect(res.body.paymentToken).to.deep.equal({ address: await tokenAddress(), symbol: "TUSD", decimals: 6 });
      });

      it("withdraw sends the token balance to the owner: tokenAmount and paymentToken, amount 0 wei", async function () {
        const before = (await tusd.getFunction("balanceOf")(f.owner.address)) as bigint;
        const res = await post(
          "withdraw",
          { privateKey: f.owner.privateKey, contractAddress: collection },
          { API_KEY: TEST_API_KEY },
        );
        await expectConfirmedWrite(res, f.provider, {
          from: f.owner.address,
          contractAddress: collection,
          extra: ["amount", "to", "tokenAmount", "paymentToken"],
        });
        expect(res.body).to.include({ amount: "0", to: f.owner.address, tokenAmount: collected.toString() });
        expect(await tusd.getFunction("balanceOf")(f.owner.address)).to.equal(before + collected);
        const nothing = await post(
          "withdraw",
          { privateKey: f.owner.privateKey, contractAddress: collection },
          { API_KEY: TEST_API_KEY },
        );
        expectError(nothing, 409, "NOTHING_TO_WITHDRAW");
      });

      it("setPaymentToken to the zero address goes back to the native coin: total-supply shows no paymentToken", async function () {
        const res = await setPaymentToken(ZeroAddress);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.changed).to.equal(true);
        const supply = await post("total-supply", { privateKey: payer.privateKey, contractAddress: collection });
        expect(supply.body).to.not.have.property("paymentToken");
      });
    });

    describe("an ERC-1155 edition", function () {
      it("checkout with tokenId, then mintWithPermit: the buyer holds the amount of the edition and 0 ETH", async function () {
        const deployed = await post("deploy", { privateKey: f.owner.privateKey, standard: "erc1155" });
        expect(deployed.status, deployed.text).to.equal(201);
        const editions = deployed.body.contractAddress as string;
        const created = await post("createEdition", {
          privateKey: f.owner.privateKey,
          contractAddress: editions,
          cost: COST.toString(),
          maxSupply: "100",
          maxMintAmountPerTx: "5",
        });
        expect(created.status, created.text).to.equal(200);
        const tokenId = created.body.tokenId as string;
        expect((await setPaymentToken(await tokenAddress(), editions)).status).to.equal(200);
        const edBuyer = freshWallet();
        await (await tusd.connect(f.owner.connect(f.provider)).getFunction("mint")(edBuyer.address, 10n * TUSD)).wait();
        const typed = await checkout({ buyer: edBuyer.address, tokenId, mintAmount: 3 }, editions);
        expect(typed.status, typed.text).to.equal(200);
        const signature = await signCheckout(edBuyer, typed.body);
        const res = await post("mintWithPermit", {
          privateKey: sender.privateKey,
          contractAddress: editions,
          tokenId,
          buyer: edBuyer.address,
          mintAmount: 3,
          deadline: typed.body.message.deadline,
          signature,
        });
        await expectConfirmedWrite(res, f.provider, {
          from: sender.address,
          contractAddress: editions,
          extra: ["buyer", "tokenId", "amount", "value", "paymentToken"],
        });
        expect(res.body).to.include({ buyer: edBuyer.address, tokenId, amount: "3", value: (COST * 3n).toString() });
        const contract = new Contract(editions, editionsInterface(), f.provider);
        expect(await contract.balanceOf(edBuyer.address, tokenId)).to.equal(3n);
        expect(await f.provider.getBalance(edBuyer.address)).to.equal(0n);
        expect(getAddress(res.body.paymentToken.address as string)).to.equal(await tokenAddress());
      });
    });

    describeSecrets(f);
  });
}
