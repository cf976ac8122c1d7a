import { expect } from "chai";
import type { Wallet } from "ethers";
import { expectConfirmedWrite, expectError, expectNoGasSpent } from "../expectations";
import { collectionAt, freshWallet } from "../harness";
import { DEFAULT_COST, describeSecrets, nftFixture } from "./fixture";

describe("POST /nft/deploy", function () {
  const f = nftFixture({ collection: false });
  let minter: Wallet;

  before(async function () {
    minter = await f.fundedWallet();
  });

  it("with only a privateKey answers 201 with the new contractAddress and owner = the caller", async function () {
    const deployer = await f.fundedWallet();
    const res = await f.api.post("/nft/deploy", { privateKey: deployer.privateKey });
    const receipt = await expectConfirmedWrite(res, f.provider, {
      status: 201,
      from: deployer.address,
      contractAddress: res.body.contractAddress ?? "0x0000000000000000000000000000000000000000",
      extra: ["owner"],
    });
    expect(res.body.contractAddress).to.equal(receipt.contractAddress);
    expect(res.body.owner).to.equal(deployer.address);
    const deployed = collectionAt(res.body.contractAddress, f.provider);
    expect(await deployed.owner()).to.equal(deployer.address);
    expect(await deployed.maxSupply()).to.equal(10_000n);
    expect(await deployed.maxMintAmountPerTx()).to.equal(10n);
    expect(await deployed.cost()).to.equal(DEFAULT_COST);
    expect(await deployed.totalSupply()).to.equal(0n);
  });

  it("with every field set deploys a collection with those values", async function () {
    const address = await f.deployThroughApi({
      name: "Custom",
      symbol: "CST",
      baseURI: "https://example.test/meta/",
      cost: 123,
      maxSupply: "7",
      maxMintAmountPerTx: 4,
    });
    const deployed = collectionAt(address, f.provider);
    expect(await deployed.name()).to.equal("Custom");
    expect(await deployed.symbol()).to.equal("CST");
    expect(await deployed.cost()).to.equal(123n);
    expect(await deployed.maxSupply()).to.equal(7n);
    expect(await deployed.maxMintAmountPerTx()).to.equal(4n);
    const minted = await f.mint(minter.privateKey, address, 1);
    const uri = await f.api.post("/nft/tokenURI", {
      privateKey: minter.privateKey,
      contractAddress: address,
      tokenId: minted.body.tokenIds[0],
    });
    expect(uri.body.tokenURI).to.equal("https://example.test/meta/1.json");
  });

  it("with a cost above 2^128 - 1 answers 422 CONTRACT_REVERTED (CostTooHigh) and spends no gas", async function () {
    const res = await expectNoGasSpent(f.provider, f.owner.address, () =>
      f.api.post("/nft/deploy", { privateKey: f.owner.privateKey, cost: (2n ** 128n).toString() }),
    );
    const error = expectError(res, 422, "CONTRACT_REVERTED");
    expect(JSON.stringify(error.details), error.message).to.include("CostTooHigh");
  });

  it("with maxSupply 0 answers 400 VALIDATION_ERROR", async function () {
    expectError(
      await f.api.post("/nft/deploy", { privateKey: f.owner.privateKey, maxSupply: 0 }),
      400,
      "VALIDATION_ERROR",
    );
  });

  it("from a fresh key with no ether answers 402 INSUFFICIENT_FUNDS", async function () {
    const poor = freshWallet();
    const res = await expectNoGasSpent(f.provider, poor.address, () =>
      f.api.post("/nft/deploy", { privateKey: poor.privateKey }),
    );
    expectError(res, 402, "INSUFFICIENT_FUNDS");
  });

  describeSecrets(f);
});
