import { expect } from "chai";
import type { Contract, Wallet } from "ethers";
import { WRITE_FIELDS, expectConfirmedWrite, expectError, expectNoGasSpent, withoutOperationId } from "../expectations";
import { collectionAt } from "../harness";
import { describeSecrets, describeWithoutCollection, nftFixture } from "./fixture";

describe("POST /nft/addUserAddressToWhitelist and whitelist-only minting", function () {
  const f = nftFixture();
  let listedContract: Contract;
  let whitelistedMinter: Wallet;
  let stranger: Wallet;

  const addToWhitelist = (key: string, address: string, contractAddress = f.collection) =>
    f.api.post("/nft/addUserAddressToWhitelist", { privateKey: key, contractAddress, address });

  before(async function () {
    [whitelistedMinter, stranger] = await Promise.all([f.fundedWallet(), f.fundedWallet()]);
    // The API has no route for setWhitelistOnly: the owner switches it on directly (before the
    // service signs with the owner's key, so that their nonces never meet).
    listedContract = collectionAt(f.collection, f.owner.connect(f.provider));
    await (await listedContract.setWhitelistOnly(true)).wait();
  });

  it("minting while whitelist-only is on and the caller is not listed answers 403 NOT_WHITELISTED, no gas spent", async function () {
    const res = await expectNoGasSpent(f.provider, whitelistedMinter.address, () =>
      f.mint(whitelistedMinter.privateKey, f.collection, 1),
    );
    expectError(res, 403, "NOT_WHITELISTED");
  });

  it("the owner adding an address answers whitelisted:true, changed:true with a confirmed transaction", async function () {
    const res = await addToWhitelist(f.owner.privateKey, whitelistedMinter.address.toLowerCase());
    await expectConfirmedWrite(res, f.provider, {
      from: f.owner.address,
      contractAddress: f.collection,
      extra: ["address", "whitelisted", "changed"],
    });
    expect(res.body.address).to.equal(whitelistedMinter.address);
    expect(res.body.whitelisted).to.equal(true);
    expect(res.body.changed).to.equal(true);
    expect(await listedContract.whitelisted(whitelistedMinter.address)).to.equal(true);
  });

  it("the listed caller can then mint", async function () {
    const res = await f.mint(whitelistedMinter.privateKey, f.collection, 1);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.tokenIds).to.deep.equal(["1"]);
  });

  it("adding an address that is already listed answers changed:false without write fields and sends no transaction", async function () {
    const res = await expectNoGasSpent(f.provider, f.owner.address, () =>
      addToWhitelist(f.owner.privateKey, whitelistedMinter.address),
    );
    expect(res.status, res.text).to.equal(200);
    expect(withoutOperationId(res.body)).to.deep.equal({
      address: whitelistedMinter.address,
      whitelisted: true,
      changed: false,
    });
    for (const field of WRITE_FIELDS.filter((w) => w !== "operationId" && w !== "chainId"))
      expect(res.body).to.not.have.property(field);
  });

  it("by an account that is not the owner answers 403 NOT_CONTRACT_OWNER and spends no gas", async function () {
    const res = await expectNoGasSpent(f.provider, stranger.address, () =>
      addToWhitelist(stranger.privateKey, stranger.address),
    );
    expectError(res, 403, "NOT_CONTRACT_OWNER");
    expect(await listedContract.whitelisted(stranger.address)).to.equal(false);
  });

  it("by a non-owner for an address already listed still answers 403 NOT_CONTRACT_OWNER", async function () {
    expectError(await addToWhitelist(stranger.privateKey, whitelistedMinter.address), 403, "NOT_CONTRACT_OWNER");
  });

  it("with a malformed address answers 400 VALIDATION_ERROR naming address", async function () {
    const error = expectError(await addToWhitelist(f.owner.privateKey, "0xnothex"), 400, "VALIDATION_ERROR");
    expect(error.details.map((d: { path: string }) => d.path)).to.include("address");
  });

  describeWithoutCollection(
    f,
    "addUserAddressToWhitelist",
    (a) => addToWhitelist(f.owner.privateKey, stranger.address, a),
    () => f.owner.address,
  );

  describeSecrets(f);
});
