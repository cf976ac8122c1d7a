import { expect } from "chai";
import type { Contract } from "ethers";
import { accountState, expectConfirmedWrite, expectError, expectNoGasSpent } from "../expectations";
import { collectionAt, freshWallet } from "../harness";
import { describeSecrets, describeWithoutCollection, nftFixture } from "./fixture";

describe("POST /nft/mintForFree", function () {
  const f = nftFixture();
  let reference: Contract;
  const receiver = freshWallet();

  const mintForFree = (body: Record<string, unknown>) => f.api.post("/nft/mintForFree", body);

  before(function () {
    reference = collectionAt(f.collection, f.provider);
  });

  it("without receiver mints to the caller (the owner) and answers tokenIds and receiver", async function () {
    const supplyBefore: bigint = await reference.totalSupply();
    const res = await mintForFree({ privateKey: f.owner.privateKey, contractAddress: f.collection, mintAmount: "2" });
    await expectConfirmedWrite(res, f.provider, {
      from: f.owner.address,
      contractAddress: f.collection,
      extra: ["tokenIds", "receiver"],
    });
    expect(res.body.receiver).to.equal(f.owner.address);
    expect(res.body.tokenIds).to.deep.equal([String(supplyBefore + 1n), String(supplyBefore + 2n)]);
    for (const id of res.body.tokenIds) expect(await reference.ownerOf(id)).to.equal(f.owner.address);
  });

  it("with an explicit receiver mints to the receiver, who pays nothing", async function () {
    const receiverBefore = await accountState(f.provider, receiver.address);
    const res = await mintForFree({
      privateKey: f.owner.privateKey,
      contractAddress: f.collection,
      mintAmount: 3,
      receiver: receiver.address.toLowerCase(),
    });
    await expectConfirmedWrite(res, f.provider, {
      from: f.owner.address,
      contractAddress: f.collection,
      extra: ["tokenIds", "receiver"],
    });
    expect(res.body.receiver).to.equal(receiver.address);
    expect(res.body.tokenIds).to.have.length(3);
    for (const id of res.body.tokenIds) expect(await reference.ownerOf(id)).to.equal(receiver.address);
    expect(await accountState(f.provider, receiver.address)).to.deep.equal(receiverBefore);
  });

  it("by an account that is not the owner answers 403 NOT_CONTRACT_OWNER and spends no gas", async function () {
    const stranger = await f.fundedWallet();
    const res = await expectNoGasSpent(f.provider, stranger.address, () =>
      mintForFree({ privateKey: stranger.privateKey, contractAddress: f.collection, mintAmount: 1 }),
    );
    expectError(res, 403, "NOT_CONTRACT_OWNER");
  });

  it("of 0 tokens answers 422 INVALID_MINT_AMOUNT and spends no gas", async function () {
    const res = await expectNoGasSpent(f.provider, f.owner.address, () =>
      mintForFree({ privateKey: f.owner.privateKey, contractAddress: f.collection, mintAmount: 0 }),
    );
    expectError(res, 422, "INVALID_MINT_AMOUNT");
  });

  it("to the zero address answers 422 CONTRACT_REVERTED with the decoded reason, no gas spent", async function () {
    const res = await expectNoGasSpent(f.provider, f.owner.address, () =>
      mintForFree({
        privateKey: f.owner.privateKey,
        contractAddress: f.collection,
        mintAmount: 1,
        receiver: "0x0000000000000000000000000000000000000000",
      }),
    );
    const error = expectError(res, 422, "CONTRACT_REVERTED");
    expect(JSON.stringify(error.details), error.message).to.include("MintToZeroAddress");
  });

  it("to a contract that cannot receive ERC-721 tokens answers 422 CONTRACT_REVERTED with the decoded reason", async function () {
    const res = await mintForFree({
      privateKey: f.owner.privateKey,
      contractAddress: f.collection,
      mintAmount: 1,
      receiver: f.collection,
    });
    const error = expectError(res, 422, "CONTRACT_REVERTED");
    expect(JSON.stringify(error.details), error.message).to.include("TransferToNonERC721ReceiverImplementer");
  });

  it("with a malformed receiver answers 400 VALIDATION_ERROR", async function () {
    const res = await mintForFree({
      privateKey: f.owner.privateKey,
      contractAddress: f.collection,
      mintAmount: 1,
      receiver: "0x1234",
    });
    const error = expectError(res, 400, "VALIDATION_ERROR");
    expect(error.details.map((d: { path: string }) => d.path)).to.include("receiver");
  });

  describeWithoutCollection(
    f,
    "mintForFree",
    (a) => mintForFree({ privateKey: f.owner.privateKey, contractAddress: a, mintAmount: 1 }),
    () => f.owner.address,
  );

  describeSecrets(f);
});
