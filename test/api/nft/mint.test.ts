import { expect } from "chai";
import { getAddress, parseEther, type Contract, type Wallet } from "ethers";
import { accountState, expectConfirmedWrite, expectError, expectNoGasSpent } from "../expectations";
import { collectionAt, freshWallet, fundedWallet } from "../harness";
import { DEFAULT_COST, describeSecrets, describeWithoutCollection, nftFixture } from "./fixture";

describe("POST /nft/mint", function () {
  const f = nftFixture();
  let minter: Wallet;
  let reference: Contract;

  before(async function () {
    minter = await f.fundedWallet();
    reference = collectionAt(f.collection, f.provider);
  });

  it("minting 2 tokens answers 200 with their ids and value = cost × 2, and the caller owns them", async function () {
    const [supplyBefore, cost, contractBalanceBefore] = await Promise.all([
      reference.totalSupply() as Promise<bigint>,
      reference.cost() as Promise<bigint>,
      f.provider.getBalance(f.collection),
    ]);
    expect(cost).to.equal(DEFAULT_COST);
    const res = await f.mint(minter.privateKey, f.collection, 2);
    await expectConfirmedWrite(res, f.provider, {
      from: minter.address,
      contractAddress: f.collection,
      extra: ["tokenIds", "value"],
    });
    expect(res.body.tokenIds).to.deep.equal([String(supplyBefore + 1n), String(supplyBefore + 2n)]);
    expect(res.body.value).to.equal((cost * 2n).toString());
    for (const id of res.body.tokenIds) expect(await reference.ownerOf(id)).to.equal(minter.address);
    expect(await f.provider.getBalance(f.collection)).to.equal(contractBalanceBefore + cost * 2n);
  });

  it("mintAmount is accepted as a decimal string as well as a JSON integer", async function () {
    const asString = await f.mint(minter.privateKey, f.collection, "1");
    expect(asString.status, asString.text).to.equal(200);
    expect(asString.body.tokenIds).to.have.length(1);
    const asNumber = await f.mint(minter.privateKey, f.collection, 1);
    expect(asNumber.status, asNumber.text).to.equal(200);
    expect(asNumber.body.tokenIds).to.have.length(1);
    expect(BigInt(asNumber.body.tokenIds[0])).to.equal(BigInt(asString.body.tokenIds[0]) + 1n);
  });

  it("a privateKey without 0x and a lower-case contractAddress are accepted; from is the checksummed caller", async function () {
    const res = await f.mint(minter.privateKey.slice(2).toUpperCase(), f.collection.toLowerCase(), "1");
    expect(res.status, res.text).to.equal(200);
    expect(res.body.from).to.equal(minter.address);
    expect(res.body.contractAddress).to.equal(getAddress(f.collection));
  });

  it("minting 0 tokens answers 422 INVALID_MINT_AMOUNT and spends no gas", async function () {
    const res = await expectNoGasSpent(f.provider, minter.address, () => f.mint(minter.privateKey, f.collection, 0));
    expectError(res, 422, "INVALID_MINT_AMOUNT");
  });

  it("minting more than maxMintAmountPerTx (11 > 10) answers 422 INVALID_MINT_AMOUNT and spends no gas", async function () {
    const res = await expectNoGasSpent(f.provider, minter.address, () => f.mint(minter.privateKey, f.collection, "11"));
    expectError(res, 422, "INVALID_MINT_AMOUNT");
  });

  it("minting 10^70 tokens (cost × amount beyond 256 bits) answers 422 INVALID_MINT_AMOUNT and spends no gas", async function () {
    const res = await expectNoGasSpent(f.provider, minter.address, () =>
      f.mint(minter.privateKey, f.collection, `1${"0".repeat(70)}`),
    );
    expect(expectError(res, 422, "INVALID_MINT_AMOUNT").message).to.match(
      /^At most 10 per transaction; 10{70} were asked/,
    );
  });

  it("minting from a fresh key with no ether answers 402 INSUFFICIENT_FUNDS and sends nothing", async function () {
    const poor = freshWallet();
    const res = await expectNoGasSpent(f.provider, poor.address, () => f.mint(poor.privateKey, f.collection, 1));
    expectError(res, 402, "INSUFFICIENT_FUNDS");
    expect(await accountState(f.provider, poor.address)).to.deep.equal({
      address: poor.address,
      balance: 0n,
      nonce: 0,
    });
  });

  it("minting from a key that can pay the gas but not cost × mintAmount answers 402 INSUFFICIENT_FUNDS", async function () {
    const thin = await fundedWallet(f.provider, parseEther("0.005"));
    const res = await expectNoGasSpent(f.provider, thin.address, () => f.mint(thin.privateKey, f.collection, 1));
    expectError(res, 402, "INSUFFICIENT_FUNDS");
  });

  it("minting on a free collection from a key with no ether still answers 402 INSUFFICIENT_FUNDS (gas)", async function () {
    const free = await f.deployThroughApi({ cost: "0" });
    const poor = freshWallet();
    const res = await expectNoGasSpent(f.provider, poor.address, () => f.mint(poor.privateKey, free, 1));
    expectError(res, 402, "INSUFFICIENT_FUNDS");
  });

  it("minting at an address without code (an EOA) answers 404 CONTRACT_NOT_FOUND and spends no gas", async function () {
    const eoa = freshWallet().address;
    const res = await expectNoGasSpent(f.provider, minter.address, () => f.mint(minter.privateKey, eoa, 1));
    expectError(res, 404, "CONTRACT_NOT_FOUND");
  });

  describe("max supply (a collection of 3, at most 2 per mint)", function () {
    let small: string;

    before(async function () {
      small = await f.deployThroughApi({ maxSupply: 3, maxMintAmountPerTx: 2 });
      const res = await f.mint(minter.privateKey, small, 2);
      expect(res.status, res.text).to.equal(200);
    });

    it("minting 2 when 1 is left answers 409 MAX_SUPPLY_EXCEEDED and spends no gas", async function () {
      const res = await expectNoGasSpent(f.provider, minter.address, () => f.mint(minter.privateKey, small, 2));
      expectError(res, 409, "MAX_SUPPLY_EXCEEDED");
    });

    it("mintForFree of 2 when 1 is left answers 409 MAX_SUPPLY_EXCEEDED", async function () {
      const res = await expectNoGasSpent(f.provider, f.owner.address, () =>
        f.api.post("/nft/mintForFree", { privateKey: f.owner.privateKey, contractAddress: small, mintAmount: 2 }),
      );
      expectError(res, 409, "MAX_SUPPLY_EXCEEDED");
    });

    it("the last token can be minted, then total-supply answers 3 of 3 and any further mint is 409", async function () {
      const last = await f.mint(minter.privateKey, small, 1);
      expect(last.status, last.text).to.equal(200);
      expect(last.body.tokenIds).to.deep.equal(["3"]);
      const supply = await f.api.post("/nft/total-supply", { privateKey: minter.privateKey, contractAddress: small });
      expect(supply.body).to.deep.equal({
        totalSupply: "3",
        maxSupply: "3",
        wallet: { address: minter.address, tokenIds: ["1", "2", "3"] },
      });
      expectError(await f.mint(minter.privateKey, small, 1), 409, "MAX_SUPPLY_EXCEEDED");
    });
  });

  describeWithoutCollection(
    f,
    "mint",
    (a) => f.mint(minter.privateKey, a, 1),
    () => minter.address,
    { revertsEverywhere: true },
  );

  describeSecrets(f);
});
