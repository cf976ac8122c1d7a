import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import {
  BASE_URI,
  COST,
  MAX_PER_TX,
  MAX_SUPPLY,
  NAME,
  SYMBOL,
  UINT128_MAX,
  collectionFixture,
  deployCollection,
} from "./fixtures";

describe("NFTCollection: deployment and getters", function () {
  describe("a freshly deployed collection", function () {
    it("has the name and symbol it was given", async function () {
      const { nft } = await loadFixture(collectionFixture);
      expect(await nft.name()).to.equal(NAME);
      expect(await nft.symbol()).to.equal(SYMBOL);
    });

    it("is owned by the deployer", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      expect(await nft.owner()).to.equal(owner.address);
    });

    it("reports its cost, max supply and max mint amount per transaction", async function () {
      const { nft } = await loadFixture(collectionFixture);
      expect(await nft.cost()).to.equal(COST);
      expect(await nft.maxSupply()).to.equal(MAX_SUPPLY);
      expect(await nft.maxMintAmountPerTx()).to.equal(MAX_PER_TX);
    });

    it("starts with no tokens, unpaused, open to everyone and with an empty whitelist", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      expect(await nft.totalSupply()).to.equal(0n);
      expect(await nft.paused()).to.equal(false);
      expect(await nft.whitelistOnly()).to.equal(false);
      expect(await nft.whitelisted(alice.address)).to.equal(false);
      expect(await nft.walletOfOwner(alice.address)).to.deep.equal([]);
    });

    it("accepts a cost of zero and the largest 128-bit cost", async function () {
      expect(await (await deployCollection({ cost: 0n })).cost()).to.equal(0n);
      expect(await (await deployCollection({ cost: UINT128_MAX })).cost()).to.equal(UINT128_MAX);
    });
  });

  describe("invalid constructor arguments", function () {
    it("refuses a max supply of zero with InvalidConfiguration", async function () {
      const factory = await ethers.getContractFactory("NFTCollection");
      await expect(factory.deploy(NAME, SYMBOL, BASE_URI, COST, 0n, MAX_PER_TX)).to.be.revertedWithCustomError(
        factory,
        "InvalidConfiguration",
      );
    });

    it("refuses a max mint amount per transaction of zero with InvalidConfiguration", async function () {
      const factory = await ethers.getContractFactory("NFTCollection");
      await expect(factory.deploy(NAME, SYMBOL, BASE_URI, COST, MAX_SUPPLY, 0n)).to.be.revertedWithCustomError(
        factory,
        "InvalidConfiguration",
      );
    });

    it("refuses a cost above 2^128 - 1 with CostTooHigh", async function () {
      const factory = await ethers.getContractFactory("NFTCollection");
      await expect(factory.deploy(NAME, SYMBOL, BASE_URI, UINT128_MAX + 1n, MAX_SUPPLY, MAX_PER_TX))
        .to.be.revertedWithCustomError(factory, "CostTooHigh")
        .withArgs(UINT128_MAX + 1n, UINT128_MAX);
    });
  });

  describe("ERC-165", function () {
    it("supports ERC165, ERC721 and ERC721Metadata", async function () {
      const { nft } = await loadFixture(collectionFixture);
      expect(await nft.supportsInterface("0x01ffc9a7")).to.equal(true);
      expect(await nft.supportsInterface("0x80ac58cd")).to.equal(true);
      expect(await nft.supportsInterface("0x5b5e139f")).to.equal(true);
    });

    it("does not claim ERC721Enumerable or the invalid id 0xffffffff", async function () {
      const { nft } = await loadFixture(collectionFixture);
      expect(await nft.supportsInterface("0x780e9d63")).to.equal(false);
      expect(await nft.supportsInterface("0xffffffff")).to.equal(false);
    });
  });
});
