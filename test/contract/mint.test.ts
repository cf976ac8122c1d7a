import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { BASE_URI, COST, MAX_PER_TX, collectionFixture, deployCollection, smallCollectionFixture } from "./fixtures";

describe("NFTCollection: minting", function () {
  describe("mint", function () {
    it("mints one token with id 1 to a caller who pays exactly the cost", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      await expect(nft.connect(alice).mint(1, { value: COST }))
        .to.emit(nft, "Transfer")
        .withArgs(ethers.ZeroAddress, alice.address, 1n);
      expect(await nft.ownerOf(1)).to.equal(alice.address);
      expect(await nft.balanceOf(alice.address)).to.equal(1n);
      expect(await nft.totalSupply()).to.equal(1n);
    });

    it("moves the payment from the caller to the contract", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      await expect(nft.connect(alice).mint(3, { value: COST * 3n })).to.changeEtherBalances(
        [alice, nft],
        [-COST * 3n, COST * 3n],
      );
    });

    it("emits one Transfer from the zero address per token of a batch", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      const tx = nft.connect(alice).mint(MAX_PER_TX, { value: COST * MAX_PER_TX });
      for (let id = 1n; id <= MAX_PER_TX; id++) {
        await expect(tx).to.emit(nft, "Transfer").withArgs(ethers.ZeroAddress, alice.address, id);
      }
      const receipt = await (await tx).wait();
      expect(receipt!.logs).to.have.length(Number(MAX_PER_TX));
    });

    it("numbers tokens sequentially from 1 across different minters", async function () {
      const { nft, alice, bob } = await loadFixture(collectionFixture);
      await nft.connect(alice).mint(2, { value: COST * 2n });
      await nft.connect(bob).mint(3, { value: COST * 3n });
      await nft.connect(alice).mint(1, { value: COST });
      expect(await nft.walletOfOwner(alice.address)).to.deep.equal([1n, 2n, 6n]);
      expect(await nft.walletOfOwner(bob.address)).to.deep.equal([3n, 4n, 5n]);
      expect(await nft.totalSupply()).to.equal(6n);
    });

    it("rejects a payment one wei below the cost with InsufficientPayment(required, sent)", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      await expect(nft.connect(alice).mint(2, { value: COST * 2n - 1n }))
        .to.be.revertedWithCustomError(nft, "InsufficientPayment")
        .withArgs(COST * 2n, COST * 2n - 1n);
      await expect(nft.connect(alice).mint(1))
        .to.be.revertedWithCustomError(nft, "InsufficientPayment")
        .withArgs(COST, 0n);
    });

    it("accepts a payment above the cost and the contract keeps the excess", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      const paid = COST * 2n + 12345n;
      await expect(nft.connect(alice).mint(2, { value: paid })).to.changeEtherBalances([alice, nft], [-paid, paid]);
      expect(await nft.balanceOf(alice.address)).to.equal(2n);
    });

    it("is free when the cost is zero", async function () {
      const [, alice] = await ethers.getSigners();
      const nft = await deployCollection({ cost: 0n });
      await expect(nft.connect(alice).mint(4)).to.changeTokenBalance(nft, alice, 4);
    });

    it("rejects an amount of zero with InvalidMintAmount(0, max)", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      await expect(nft.connect(alice).mint(0))
        .to.be.revertedWithCustomError(nft, "InvalidMintAmount")
        .withArgs(0n, MAX_PER_TX);
    });

    it("accepts exactly maxMintAmountPerTx and rejects one more with InvalidMintAmount", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      await expect(nft.connect(alice).mint(MAX_PER_TX + 1n, { value: COST * (MAX_PER_TX + 1n) }))
        .to.be.revertedWithCustomError(nft, "InvalidMintAmount")
        .withArgs(MAX_PER_TX + 1n, MAX_PER_TX);
      await expect(nft.connect(alice).mint(MAX_PER_TX, { value: COST * MAX_PER_TX })).to.changeTokenBalance(
        nft,
        alice,
        MAX_PER_TX,
      );
    });

    it("rejects minting while paused with ContractPaused, and works again once resumed", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(owner).setPaused(true);
      await expect(nft.connect(alice).mint(1, { value: COST })).to.be.revertedWithCustomError(nft, "ContractPaused");
      await nft.connect(owner).setPaused(false);
      await expect(nft.connect(alice).mint(1, { value: COST })).to.changeTokenBalance(nft, alice, 1);
    });

    it("reports a pause before any other problem with the call", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(owner).setPaused(true);
      await nft.connect(owner).setWhitelistOnly(true);
      await expect(nft.connect(alice).mint(0)).to.be.revertedWithCustomError(nft, "ContractPaused");
    });
  });

  describe("whitelist-only mode", function () {
    it("rejects a caller who is not whitelisted with NotWhitelisted(caller)", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(owner).setWhitelistOnly(true);
      await expect(nft.connect(alice).mint(1, { value: COST }))
        .to.be.revertedWithCustomError(nft, "NotWhitelisted")
        .withArgs(alice.address);
    });

    it("lets a whitelisted caller mint", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(owner).setWhitelistOnly(true);
      await nft.connect(owner).addUserAddressToWhitelist(alice.address);
      await expect(nft.connect(alice).mint(2, { value: COST * 2n })).to.changeTokenBalance(nft, alice, 2);
    });

    it("rejects a caller again after they are removed from the whitelist", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(owner).setWhitelistOnly(true);
      await nft.connect(owner).addUserAddressToWhitelist(alice.address);
      await nft.connect(owner).removeFromWhitelist(alice.address);
      await expect(nft.connect(alice).mint(1, { value: COST }))
        .to.be.revertedWithCustomError(nft, "NotWhitelisted")
        .withArgs(alice.address);
    });

    it("lets anyone mint again once whitelist-only mode is switched off", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(owner).setWhitelistOnly(true);
      await nft.connect(owner).setWhitelistOnly(false);
      await expect(nft.connect(alice).mint(1, { value: COST })).to.changeTokenBalance(nft, alice, 1);
    });

    it("still requires a whitelisted caller to pay the cost", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(owner).setWhitelistOnly(true);
      await nft.connect(owner).addUserAddressToWhitelist(alice.address);
      await expect(nft.connect(alice).mint(1))
        .to.be.revertedWithCustomError(nft, "InsufficientPayment")
        .withArgs(COST, 0n);
    });
  });

  describe("max supply", function () {
    it("lets mints reach the max supply exactly", async function () {
      const { nft, alice, bob } = await loadFixture(smallCollectionFixture);
      await nft.connect(alice).mint(3, { value: COST * 3n });
      await nft.connect(bob).mint(2, { value: COST * 2n });
      expect(await nft.totalSupply()).to.equal(await nft.maxSupply());
      expect(await nft.ownerOf(5)).to.equal(bob.address);
    });

    it("rejects a mint that would pass it with MaxSupplyExceeded(amount, remaining)", async function () {
      const { nft, alice } = await loadFixture(smallCollectionFixture);
      await nft.connect(alice).mint(3, { value: COST * 3n });
      await expect(nft.connect(alice).mint(3, { value: COST * 3n }))
        .to.be.revertedWithCustomError(nft, "MaxSupplyExceeded")
        .withArgs(3n, 2n);
    });

    it("rejects even one more token once it is reached, with MaxSupplyExceeded(1, 0)", async function () {
      const { nft, owner, alice } = await loadFixture(smallCollectionFixture);
      await nft.connect(owner).mintForFree(3, alice.address);
      await nft.connect(owner).mintForFree(2, alice.address);
      await expect(nft.connect(alice).mint(1, { value: COST }))
        .to.be.revertedWithCustomError(nft, "MaxSupplyExceeded")
        .withArgs(1n, 0n);
      await expect(nft.connect(owner).mintForFree(1, alice.address))
        .to.be.revertedWithCustomError(nft, "MaxSupplyExceeded")
        .withArgs(1n, 0n);
      expect(await nft.totalSupply()).to.equal(5n);
    });
  });

  describe("mintForFree", function () {
    it("mints to the receiver without payment and emits Transfer for each token", async function () {
      const { nft, owner, bob } = await loadFixture(collectionFixture);
      const tx = nft.connect(owner).mintForFree(2, bob.address);
      await expect(tx).to.emit(nft, "Transfer").withArgs(ethers.ZeroAddress, bob.address, 1n);
      await expect(tx).to.emit(nft, "Transfer").withArgs(ethers.ZeroAddress, bob.address, 2n);
      await expect(tx).to.changeEtherBalance(nft, 0n);
      expect(await nft.walletOfOwner(bob.address)).to.deep.equal([1n, 2n]);
    });

    it("works while minting is paused", async function () {
      const { nft, owner, bob } = await loadFixture(collectionFixture);
      await nft.connect(owner).setPaused(true);
      await expect(nft.connect(owner).mintForFree(3, bob.address)).to.changeTokenBalance(nft, bob, 3);
    });

    it("works for a receiver who is not whitelisted in whitelist-only mode", async function () {
      const { nft, owner, bob } = await loadFixture(collectionFixture);
      await nft.connect(owner).setWhitelistOnly(true);
      await expect(nft.connect(owner).mintForFree(1, bob.address)).to.changeTokenBalance(nft, bob, 1);
    });

    it("rejects an amount of zero or above the per-transaction maximum with InvalidMintAmount", async function () {
      const { nft, owner, bob } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).mintForFree(0, bob.address))
        .to.be.revertedWithCustomError(nft, "InvalidMintAmount")
        .withArgs(0n, MAX_PER_TX);
      await expect(nft.connect(owner).mintForFree(MAX_PER_TX + 1n, bob.address))
        .to.be.revertedWithCustomError(nft, "InvalidMintAmount")
        .withArgs(MAX_PER_TX + 1n, MAX_PER_TX);
    });

    it("refuses the zero address and contracts that cannot receive ERC-721 tokens", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).mintForFree(1, ethers.ZeroAddress)).to.be.revertedWithCustomError(
        nft,
        "MintToZeroAddress",
      );
      await expect(nft.connect(owner).mintForFree(1, await nft.getAddress())).to.be.revertedWithCustomError(
        nft,
        "TransferToNonERC721ReceiverImplementer",
      );
    });
  });

  describe("tokenURI", function () {
    it("is the base URI, the token id and .json", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      await nft.connect(alice).mint(MAX_PER_TX, { value: COST * MAX_PER_TX });
      expect(await nft.tokenURI(1)).to.equal(`${BASE_URI}1.json`);
      expect(await nft.tokenURI(10)).to.equal(`${BASE_URI}10.json`);
    });

    it("rejects token 0 and ids past the total supply with NonexistentToken(id)", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      await nft.connect(alice).mint(1, { value: COST });
      await expect(nft.tokenURI(0)).to.be.revertedWithCustomError(nft, "NonexistentToken").withArgs(0n);
      await expect(nft.tokenURI(2)).to.be.revertedWithCustomError(nft, "NonexistentToken").withArgs(2n);
    });

    it("follows a new base URI set by the owner", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(alice).mint(1, { value: COST });
      await nft.connect(owner).setBaseURI("https://example.com/meta/");
      expect(await nft.tokenURI(1)).to.equal("https://example.com/meta/1.json");
    });
  });
});
