import { expect } from "chai";
import { ethers } from "hardhat";
import { impersonateAccount, loadFixture, setBalance, setCode } from "@nomicfoundation/hardhat-network-helpers";
import { COST, collectionFixture } from "./fixtures";

/** The collection with 3 paid tokens in it, so it holds 3 × COST wei. */
async function fundedFixture() {
  const base = await collectionFixture();
  await base.nft.connect(base.alice).mint(3, { value: COST * 3n });
  return { ...base, funds: COST * 3n };
}

/** The funded collection, owned by a ReentrantOwner that re-enters withdraw from its receive hook. */
async function attackerOwnedFixture() {
  const base = await fundedFixture();
  const attacker = await (await ethers.getContractFactory("ReentrantOwner")).deploy();
  await attacker.setTarget(await base.nft.getAddress());
  await base.nft.connect(base.owner).transferOwnership(await attacker.getAddress());
  return { ...base, attacker };
}

describe("NFTCollection: withdraw", function () {
  it("sends the whole balance to the owner and emits Withdrawn(owner, amount)", async function () {
    const { nft, owner, funds } = await loadFixture(fundedFixture);
    const tx = nft.connect(owner).withdraw();
    await expect(tx).to.emit(nft, "Withdrawn").withArgs(owner.address, funds);
    await expect(tx).to.changeEtherBalances([nft, owner], [-funds, funds]);
    expect(await ethers.provider.getBalance(await nft.getAddress())).to.equal(0n);
  });

  it("includes the excess paid above the cost", async function () {
    const { nft, owner, bob, funds } = await loadFixture(fundedFixture);
    await nft.connect(bob).mint(1, { value: COST + 7n });
    await expect(nft.connect(owner).withdraw()).to.changeEtherBalance(owner, funds + COST + 7n);
  });

  it("rejects a withdrawal from an empty contract with NothingToWithdraw", async function () {
    const { nft, owner } = await loadFixture(collectionFixture);
    await expect(nft.connect(owner).withdraw()).to.be.revertedWithCustomError(nft, "NothingToWithdraw");
  });

  it("rejects a second withdrawal right after the first with NothingToWithdraw", async function () {
    const { nft, owner } = await loadFixture(fundedFixture);
    await nft.connect(owner).withdraw();
    await expect(nft.connect(owner).withdraw()).to.be.revertedWithCustomError(nft, "NothingToWithdraw");
  });

  it("reverts with WithdrawFailed(owner, amount) when the owner refuses ether, keeping the balance", async function () {
    const { nft, owner, funds } = await loadFixture(fundedFixture);
    // An owner account whose code is `PUSH1 0 PUSH1 0 REVERT`: any ether sent to it bounces.
    const rejecting = ethers.getAddress("0x00000000000000000000000000000000000bad01");
    await setCode(rejecting, "0x60006000fd");
    await setBalance(rejecting, ethers.parseEther("1"));
    await impersonateAccount(rejecting);
    await nft.connect(owner).transferOwnership(rejecting);
    const rejectingOwner = await ethers.getSigner(rejecting);
    await expect(nft.connect(rejectingOwner).withdraw())
      .to.be.revertedWithCustomError(nft, "WithdrawFailed")
      .withArgs(rejecting, funds);
    expect(await ethers.provider.getBalance(await nft.getAddress())).to.equal(funds);
  });

  describe("against a re-entering owner", function () {
    it("pays the balance exactly once", async function () {
      const { nft, attacker, funds } = await loadFixture(attackerOwnedFixture);
      const tx = attacker.attack();
      await expect(tx).to.changeEtherBalances([nft, attacker], [-funds, funds]);
      await expect(tx)
        .to.emit(nft, "Withdrawn")
        .withArgs(await attacker.getAddress(), funds);
      expect(await attacker.receiveCount()).to.equal(1n);
    });

    it("makes the re-entering call fail with ReentrancyGuardReentrantCall", async function () {
      const { nft, attacker } = await loadFixture(attackerOwnedFixture);
      await attacker.attack();
      expect(await attacker.reentrySucceeded()).to.equal(false);
      const selector = nft.interface.getError("ReentrancyGuardReentrantCall")!.selector;
      expect(await attacker.reentryError()).to.equal(selector);
    });
  });
});
