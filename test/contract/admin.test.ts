import { expect } from "chai";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import type { ContractTransactionResponse } from "ethers";
import type { NFTCollection } from "../../typechain-types";
import { COST, UINT128_MAX, collectionFixture } from "./fixtures";

/** The number of events a transaction emitted. */
async function logCount(tx: Promise<ContractTransactionResponse>): Promise<number> {
  const receipt = await (await tx).wait();
  return receipt!.logs.length;
}

describe("NFTCollection: owner settings", function () {
  describe("whitelist", function () {
    it("adds an address and emits WhitelistAdded", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).addUserAddressToWhitelist(alice.address))
        .to.emit(nft, "WhitelistAdded")
        .withArgs(alice.address);
      expect(await nft.whitelisted(alice.address)).to.equal(true);
    });

    it("emits nothing when adding an address that is already listed", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(owner).addUserAddressToWhitelist(alice.address);
      expect(await logCount(nft.connect(owner).addUserAddressToWhitelist(alice.address))).to.equal(0);
      expect(await nft.whitelisted(alice.address)).to.equal(true);
    });

    it("removes an address and emits WhitelistRemoved", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(owner).addUserAddressToWhitelist(alice.address);
      await expect(nft.connect(owner).removeFromWhitelist(alice.address))
        .to.emit(nft, "WhitelistRemoved")
        .withArgs(alice.address);
      expect(await nft.whitelisted(alice.address)).to.equal(false);
    });

    it("emits nothing when removing an address that is not listed", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      expect(await logCount(nft.connect(owner).removeFromWhitelist(alice.address))).to.equal(0);
    });

    it("lists addresses independently of each other", async function () {
      const { nft, owner, alice, bob } = await loadFixture(collectionFixture);
      await nft.connect(owner).addUserAddressToWhitelist(alice.address);
      expect(await nft.whitelisted(alice.address)).to.equal(true);
      expect(await nft.whitelisted(bob.address)).to.equal(false);
    });
  });

  describe("setWhitelistOnly", function () {
    it("switches the mode on and off, emitting WhitelistOnlyChanged each time", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).setWhitelistOnly(true)).to.emit(nft, "WhitelistOnlyChanged").withArgs(true);
      expect(await nft.whitelistOnly()).to.equal(true);
      await expect(nft.connect(owner).setWhitelistOnly(false)).to.emit(nft, "WhitelistOnlyChanged").withArgs(false);
      expect(await nft.whitelistOnly()).to.equal(false);
    });

    it("emits nothing when the mode does not change", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      expect(await logCount(nft.connect(owner).setWhitelistOnly(false))).to.equal(0);
    });
  });

  describe("setPaused", function () {
    it("pauses and resumes, emitting PausedChanged each time", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).setPaused(true)).to.emit(nft, "PausedChanged").withArgs(true);
      expect(await nft.paused()).to.equal(true);
      await expect(nft.connect(owner).setPaused(false)).to.emit(nft, "PausedChanged").withArgs(false);
      expect(await nft.paused()).to.equal(false);
    });

    it("emits nothing when the state does not change", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      expect(await logCount(nft.connect(owner).setPaused(false))).to.equal(0);
      await nft.connect(owner).setPaused(true);
      expect(await logCount(nft.connect(owner).setPaused(true))).to.equal(0);
    });

    it("leaves the cost and whitelist-only mode untouched (they share a storage slot)", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      await nft.connect(owner).setWhitelistOnly(true);
      await nft.connect(owner).setPaused(true);
      expect(await nft.cost()).to.equal(COST);
      expect(await nft.whitelistOnly()).to.equal(true);
    });
  });

  describe("setCost", function () {
    it("changes the price and emits CostChanged(previous, new)", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).setCost(COST * 2n))
        .to.emit(nft, "CostChanged")
        .withArgs(COST, COST * 2n);
      expect(await nft.cost()).to.equal(COST * 2n);
    });

    it("charges the new price on the next mint", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(owner).setCost(COST * 2n);
      await expect(nft.connect(alice).mint(1, { value: COST }))
        .to.be.revertedWithCustomError(nft, "InsufficientPayment")
        .withArgs(COST * 2n, COST);
      await nft.connect(alice).mint(1, { value: COST * 2n });
    });

    it("accepts zero and the largest 128-bit value", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).setCost(0n)).to.emit(nft, "CostChanged").withArgs(COST, 0n);
      await expect(nft.connect(owner).setCost(UINT128_MAX)).to.emit(nft, "CostChanged").withArgs(0n, UINT128_MAX);
      expect(await nft.cost()).to.equal(UINT128_MAX);
    });

    it("rejects a price above 2^128 - 1 with CostTooHigh(cost, max)", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).setCost(UINT128_MAX + 1n))
        .to.be.revertedWithCustomError(nft, "CostTooHigh")
        .withArgs(UINT128_MAX + 1n, UINT128_MAX);
      expect(await nft.cost()).to.equal(COST);
    });

    it("emits nothing when the price does not change", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      expect(await logCount(nft.connect(owner).setCost(COST))).to.equal(0);
    });

    it("leaves the pause and whitelist-only switches untouched", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      await nft.connect(owner).setPaused(true);
      await nft.connect(owner).setWhitelistOnly(true);
      await nft.connect(owner).setCost(UINT128_MAX);
      expect(await nft.paused()).to.equal(true);
      expect(await nft.whitelistOnly()).to.equal(true);
    });
  });

  describe("setBaseURI", function () {
    it("emits BaseURIChanged with the new base", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).setBaseURI("ar://new/")).to.emit(nft, "BaseURIChanged").withArgs("ar://new/");
    });
  });

  describe("access control", function () {
    type Call = (nft: NFTCollection, user: string) => Promise<ContractTransactionResponse>;
    const ownerOnly: Record<string, Call> = {
      mintForFree: (nft, user) => nft.mintForFree(1, user),
      addUserAddressToWhitelist: (nft, user) => nft.addUserAddressToWhitelist(user),
      removeFromWhitelist: (nft, user) => nft.removeFromWhitelist(user),
      setWhitelistOnly: (nft) => nft.setWhitelistOnly(true),
      setPaused: (nft) => nft.setPaused(true),
      setCost: (nft) => nft.setCost(1n),
      setBaseURI: (nft) => nft.setBaseURI("evil://"),
      withdraw: (nft) => nft.withdraw(),
    };

    for (const [name, call] of Object.entries(ownerOnly)) {
      it(`refuses ${name} from anyone but the owner with OwnableUnauthorizedAccount(caller)`, async function () {
        const { nft, alice } = await loadFixture(collectionFixture);
        await nft.connect(alice).mint(1, { value: COST }); // so withdraw has something to take
        await expect(call(nft.connect(alice), alice.address))
          .to.be.revertedWithCustomError(nft, "OwnableUnauthorizedAccount")
          .withArgs(alice.address);
      });
    }

    it("hands every owner-only function to a new owner after transferOwnership", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(owner).transferOwnership(alice.address);
      await expect(nft.connect(owner).setPaused(true))
        .to.be.revertedWithCustomError(nft, "OwnableUnauthorizedAccount")
        .withArgs(owner.address);
      await expect(nft.connect(alice).setPaused(true)).to.emit(nft, "PausedChanged").withArgs(true);
    });

    it("leaves no one able to call owner-only functions after renounceOwnership", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      await nft.connect(owner).renounceOwnership();
      await expect(nft.connect(owner).mintForFree(1, owner.address))
        .to.be.revertedWithCustomError(nft, "OwnableUnauthorizedAccount")
        .withArgs(owner.address);
    });
  });
});
