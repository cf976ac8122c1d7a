import { expect } from "chai";
import { parseEther, type Contract, type Wallet } from "ethers";
import { expectConfirmedWrite, expectError, expectNoGasSpent, withoutOperationId } from "../expectations";
import { collectionAt } from "../harness";
import { describeSecrets, describeWithoutCollection, nftFixture } from "./fixture";

describe("POST /nft/setCost", function () {
  const f = nftFixture({ collection: false });
  let priced: string;
  let pricedContract: Contract;
  let minter: Wallet;
  let stranger: Wallet;

  before(async function () {
    [minter, stranger] = await Promise.all([f.fundedWallet(), f.fundedWallet()]);
    priced = await f.deployThroughApi({ cost: "1000" });
    pricedContract = collectionAt(priced, f.provider);
  });

  const setCost = (cost: unknown, key: string = f.owner.privateKey, contractAddress = priced) =>
    f.api.post("/nft/setCost", { privateKey: key, contractAddress, cost });

  it("a new cost answers cost and changed:true with a confirmed transaction; the next mint pays it", async function () {
    const newCost = parseEther("0.02");
    const res = await setCost(newCost.toString());
    await expectConfirmedWrite(res, f.provider, {
      from: f.owner.address,
      contractAddress: priced,
      extra: ["cost", "changed"],
    });
    expect(res.body.cost).to.equal(newCost.toString());
    expect(res.body.changed).to.equal(true);
    expect(await pricedContract.cost()).to.equal(newCost);
    const minted = await f.mint(minter.privateKey, priced, 3);
    expect(minted.status, minted.text).to.equal(200);
    expect(minted.body.value).to.equal((newCost * 3n).toString());
    expect(await f.provider.getBalance(priced)).to.equal(newCost * 3n);
  });

  it("the current cost answers exactly {cost, changed:false} and sends no transaction", async function () {
    const current: bigint = await pricedContract.cost();
    const res = await expectNoGasSpent(f.provider, f.owner.address, () => setCost(current.toString()));
    expect(res.status, res.text).to.equal(200);
    expect(withoutOperationId(res.body)).to.deep.equal({ cost: current.toString(), changed: false });
  });

  it("a cost above 2^53 sent as a decimal string is set exactly", async function () {
    const big = 2n ** 53n + 1n;
    const res = await setCost(big.toString());
    expect(res.status, res.text).to.equal(200);
    expect(res.body.cost).to.equal(big.toString());
    expect(await pricedContract.cost()).to.equal(big);
  });

  it("a cost sent as a JSON integer is accepted, and 0 makes minting free", async function () {
    const res = await setCost(0);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ cost: "0", changed: true });
    const minted = await f.mint(minter.privateKey, priced, 1);
    expect(minted.status, minted.text).to.equal(200);
    expect(minted.body.value).to.equal("0");
  });

  it("a cost above 2^128 - 1 (the contract's CostTooHigh) answers 422 CONTRACT_REVERTED naming the reason, no gas spent", async function () {
    const res = await expectNoGasSpent(f.provider, f.owner.address, () => setCost((2n ** 128n).toString()));
    const error = expectError(res, 422, "CONTRACT_REVERTED");
    expect(JSON.stringify(error.details), error.message).to.include("CostTooHigh");
  });

  it("by an account that is not the owner answers 403 NOT_CONTRACT_OWNER and spends no gas", async function () {
    const res = await expectNoGasSpent(f.provider, stranger.address, () => setCost("5", stranger.privateKey));
    expectError(res, 403, "NOT_CONTRACT_OWNER");
    expect(await pricedContract.cost()).to.equal(0n);
  });

  for (const cost of [-1, "1.5", "abc", undefined]) {
    it(`cost ${JSON.stringify(cost) ?? "missing"} answers 400 VALIDATION_ERROR`, async function () {
      expectError(await setCost(cost), 400, "VALIDATION_ERROR");
    });
  }

  describeWithoutCollection(
    f,
    "setCost",
    (a) => setCost("1", f.owner.privateKey, a),
    () => f.owner.address,
  );

  describeSecrets(f);
});
