import { expect } from "chai";
import type { Contract, Wallet } from "ethers";
import { expectConfirmedWrite, expectError, expectNoGasSpent, withoutOperationId } from "../expectations";
import { collectionAt } from "../harness";
import { describeSecrets, describeWithoutCollection, nftFixture } from "./fixture";

describe("POST /nft/setPaused", function () {
  const f = nftFixture({ collection: false });
  let pausable: string;
  let pausableContract: Contract;
  let minter: Wallet;
  let stranger: Wallet;

  before(async function () {
    [minter, stranger] = await Promise.all([f.fundedWallet(), f.fundedWallet()]);
    pausable = await f.deployThroughApi();
    pausableContract = collectionAt(pausable, f.provider);
  });

  const setPaused = (state: unknown, key: string = f.owner.privateKey, contractAddress = pausable) =>
    f.api.post("/nft/setPaused", { privateKey: key, contractAddress, state });

  it("state true answers paused:true, changed:true with a confirmed transaction; paused() is true on chain", async function () {
    const res = await setPaused(true);
    await expectConfirmedWrite(res, f.provider, {
      from: f.owner.address,
      contractAddress: pausable,
      extra: ["paused", "changed"],
    });
    expect(res.body.paused).to.equal(true);
    expect(res.body.changed).to.equal(true);
    expect(await pausableContract.paused()).to.equal(true);
  });

  it("state true again answers exactly {paused:true, changed:false} and sends no transaction", async function () {
    const res = await expectNoGasSpent(f.provider, f.owner.address, () => setPaused(true));
    expect(res.status, res.text).to.equal(200);
    expect(withoutOperationId(res.body)).to.deep.equal({ paused: true, changed: false });
  });

  it("minting while paused answers 409 CONTRACT_PAUSED and spends no gas", async function () {
    const res = await expectNoGasSpent(f.provider, minter.address, () => f.mint(minter.privateKey, pausable, 1));
    expectError(res, 409, "CONTRACT_PAUSED");
  });

  it("mintForFree by the owner still works while paused", async function () {
    const res = await f.api.post("/nft/mintForFree", {
      privateKey: f.owner.privateKey,
      contractAddress: pausable,
      mintAmount: 1,
    });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.tokenIds).to.have.length(1);
  });

  it("by an account that is not the owner answers 403 NOT_CONTRACT_OWNER and spends no gas", async function () {
    const res = await expectNoGasSpent(f.provider, stranger.address, () => setPaused(false, stranger.privateKey));
    expectError(res, 403, "NOT_CONTRACT_OWNER");
    expect(await pausableContract.paused()).to.equal(true);
  });

  it("by a non-owner asking for the current state still answers 403 NOT_CONTRACT_OWNER", async function () {
    expectError(await setPaused(true, stranger.privateKey), 403, "NOT_CONTRACT_OWNER");
  });

  it('the string "false" resumes minting (changed:true), and "false" again answers changed:false', async function () {
    const res = await setPaused("false");
    await expectConfirmedWrite(res, f.provider, {
      from: f.owner.address,
      contractAddress: pausable,
      extra: ["paused", "changed"],
    });
    expect(res.body).to.include({ paused: false, changed: true });
    expect(await pausableContract.paused()).to.equal(false);
    const again = await expectNoGasSpent(f.provider, f.owner.address, () => setPaused("false"));
    expect(withoutOperationId(again.body)).to.deep.equal({ paused: false, changed: false });
    const minted = await f.mint(minter.privateKey, pausable, 1);
    expect(minted.status, minted.text).to.equal(200);
  });

  it('the string "true" pauses', async function () {
    const res = await setPaused("true");
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ paused: true, changed: true });
    expect(await pausableContract.paused()).to.equal(true);
  });

  for (const state of ["yes", 1, null]) {
    it(`state ${JSON.stringify(state)} answers 400 VALIDATION_ERROR naming state`, async function () {
      const error = expectError(await setPaused(state), 400, "VALIDATION_ERROR");
      expect(error.details.map((d: { path: string }) => d.path)).to.include("state");
    });
  }

  describeWithoutCollection(
    f,
    "setPaused",
    (a) => setPaused(true, f.owner.privateKey, a),
    () => f.owner.address,
  );

  describeSecrets(f);
});
