import { expect } from "chai";
import { ethers } from "hardhat";
import { impersonateAccount, loadFixture, setBalance, setCode } from "@nomicfoundation/hardhat-network-helpers";
import type { NFTEditions } from "../../typechain-types";
import {
  BASE_URI,
  CAPPED,
  COST,
  EDITIONS_NAME,
  EDITIONS_SYMBOL,
  OPEN,
  UINT128_MAX,
  deployEditions,
  editionsFixture,
} from "./fixtures";

const UINT32_MAX = 2n ** 32n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
const UINT256_MAX = ethers.MaxUint256;
const ZERO = ethers.ZeroAddress;

const supplyOf = (editions: NFTEditions, id: bigint) => editions["totalSupply(uint256)"](id);

/** The editions with 3 paid tokens of the capped edition in them, so the contract holds 3 × COST wei. */
async function fundedFixture() {
  const base = await editionsFixture();
  await base.editions.connect(base.alice).mint(CAPPED.id, 3n, { value: COST * 3n });
  return { ...base, funds: COST * 3n };
}

/** The funded editions, owned by a ReentrantOwner that re-enters withdraw from its receive hook. */
async function attackerOwnedFixture() {
  const base = await fundedFixture();
  const attacker = await (await ethers.getContractFactory("ReentrantOwner")).deploy();
  await attacker.setTarget(await base.editions.getAddress());
  await base.editions.connect(base.owner).transferOwnership(await attacker.getAddress());
  return { ...base, attacker };
}

describe("NFTEditions: ERC-1155 editions", function () {
  describe("deployment", function () {
    it("has its name and symbol, is owned by the deployer, and starts with no edition, unpaused and open", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      const fresh = await deployEditions();
      expect(await fresh.name()).to.equal(EDITIONS_NAME);
      expect(await fresh.symbol()).to.equal(EDITIONS_SYMBOL);
      expect(await fresh.owner()).to.equal(owner.address);
      expect(await fresh.editionCount()).to.equal(0n);
      expect(await fresh["totalSupply()"]()).to.equal(0n);
      expect(await editions.paused()).to.equal(false);
      expect(await editions.whitelistOnly()).to.equal(false);
      expect(await editions.whitelisted(alice.address)).to.equal(false);
    });

    it("sets the royalty given to the constructor, with DefaultRoyaltyChanged, and none for the zero address", async function () {
      const [, alice] = await ethers.getSigners();
      const withRoyalty = await deployEditions(alice.address, 250n);
      await expect(withRoyalty.deploymentTransaction())
        .to.emit(withRoyalty, "DefaultRoyaltyChanged")
        .withArgs(alice.address, 250n);
      expect(await withRoyalty.royaltyInfo(1n, 10_000n)).to.deep.equal([alice.address, 250n]);
      const without = await deployEditions();
      expect(await without.royaltyInfo(1n, 10_000n)).to.deep.equal([ZERO, 0n]);
    });
  });

  describe("createEdition", function () {
    it("numbers editions from 1 in order, returns the id and emits EditionCreated and a TransferSingle of 0", async function () {
      const { owner } = await loadFixture(editionsFixture);
      const editions = await deployEditions();
      expect(await editions.createEdition.staticCall(COST, 5n, 3n)).to.equal(1n);
      const tx = editions.createEdition(COST, 5n, 3n);
      await expect(tx).to.emit(editions, "EditionCreated").withArgs(1n, COST, 5n, 3n);
      await expect(tx).to.emit(editions, "TransferSingle").withArgs(owner.address, ZERO, ZERO, 1n, 0n);
      await expect(editions.createEdition(0n, 0n, 1n))
        .to.emit(editions, "EditionCreated")
        .withArgs(2n, 0n, 0n, 1n);
      expect(await editions.editionCount()).to.equal(2n);
    });

    it("keeps each edition's cost, cap, per-transaction cap and pause, readable one by one or together", async function () {
      const { editions } = await loadFixture(editionsFixture);
      for (const e of [CAPPED, OPEN]) {
        expect(await editions.cost(e.id)).to.equal(e.cost);
        expect(await editions.maxSupply(e.id)).to.equal(e.maxSupply);
        expect(await editions.maxMintAmountPerTx(e.id)).to.equal(e.maxPerTx);
        expect(await editions.editionPaused(e.id)).to.equal(false);
        expect(await editions.edition(e.id)).to.deep.equal([e.cost, e.maxSupply, e.maxPerTx, false, 0n]);
      }
    });

    it("accepts the largest cost, cap and per-transaction cap that fit their slots", async function () {
      const editions = await deployEditions();
      await editions.createEdition(UINT128_MAX, UINT64_MAX, UINT32_MAX);
      expect(await editions.edition(1n)).to.deep.equal([UINT128_MAX, UINT64_MAX, UINT32_MAX, false, 0n]);
    });

    it("refuses a cost above 2^128 - 1 with CostTooHigh", async function () {
      const editions = await deployEditions();
      await expect(editions.createEdition(UINT128_MAX + 1n, 5n, 3n))
        .to.be.revertedWithCustomError(editions, "CostTooHigh")
        .withArgs(UINT128_MAX + 1n, UINT128_MAX);
    });

    it("refuses a per-transaction cap of 0 or above 2^32 - 1, and a cap above 2^64 - 1, with InvalidEdition", async function () {
      const editions = await deployEditions();
      for (const [maxSupply, maxPerTx] of [
        [5n, 0n],
        [5n, UINT32_MAX + 1n],
        [UINT64_MAX + 1n, 3n],
      ]) {
        await expect(editions.createEdition(COST, maxSupply, maxPerTx))
          .to.be.revertedWithCustomError(editions, "InvalidEdition")
          .withArgs(maxSupply, maxPerTx);
      }
      expect(await editions.editionCount()).to.equal(0n);
    });

    it("is the owner's only", async function () {
      const { editions, alice } = await loadFixture(editionsFixture);
      await expect(editions.connect(alice).createEdition(COST, 5n, 3n))
        .to.be.revertedWithCustomError(editions, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
    });

    it("answers NonexistentToken(id) for id 0 and the id after the last, from every getter and uri", async function () {
      const { editions } = await loadFixture(editionsFixture);
      for (const id of [0n, 3n]) {
        for (const read of [
          () => editions.cost(id),
          () => editions.maxSupply(id),
          () => editions.maxMintAmountPerTx(id),
          () => editions.editionPaused(id),
          () => editions.edition(id),
          () => editions.uri(id),
        ]) {
          await expect(read()).to.be.revertedWithCustomError(editions, "NonexistentToken").withArgs(id);
        }
      }
    });
  });

  describe("mint", function () {
    it("mints the amount of one edition to a caller who pays exactly, with TransferSingle", async function () {
      const { editions, alice } = await loadFixture(editionsFixture);
      await expect(editions.connect(alice).mint(CAPPED.id, 2n, { value: COST * 2n }))
        .to.emit(editions, "TransferSingle")
        .withArgs(alice.address, ZERO, alice.address, CAPPED.id, 2n);
      expect(await editions.balanceOf(alice.address, CAPPED.id)).to.equal(2n);
      expect(await supplyOf(editions, CAPPED.id)).to.equal(2n);
      expect(await editions["totalSupply()"]()).to.equal(2n);
      expect((await editions.edition(CAPPED.id))[4]).to.equal(2n);
    });

    it("moves the payment from the caller to the contract, keeping an excess", async function () {
      const { editions, alice } = await loadFixture(editionsFixture);
      const paid = COST * 3n + 12345n;
      await expect(editions.connect(alice).mint(CAPPED.id, 3n, { value: paid })).to.changeEtherBalances(
        [alice, editions],
        [-paid, paid],
      );
    });

    it("prices and counts each edition apart", async function () {
      const { editions, alice, bob } = await loadFixture(editionsFixture);
      await editions.connect(alice).mint(CAPPED.id, 1n, { value: CAPPED.cost });
      await editions.connect(bob).mint(OPEN.id, 4n, { value: OPEN.cost * 4n });
      expect(await supplyOf(editions, CAPPED.id)).to.equal(1n);
      expect(await supplyOf(editions, OPEN.id)).to.equal(4n);
      expect(await editions.balanceOf(bob.address, CAPPED.id)).to.equal(0n);
      expect(await editions["totalSupply()"]()).to.equal(5n);
      await expect(editions.connect(bob).mint(OPEN.id, 1n, { value: CAPPED.cost }))
        .to.be.revertedWithCustomError(editions, "InsufficientPayment")
        .withArgs(OPEN.cost, CAPPED.cost);
    });

    it("rejects a payment one wei below the cost with InsufficientPayment(required, sent)", async function () {
      const { editions, alice } = await loadFixture(editionsFixture);
      await expect(editions.connect(alice).mint(CAPPED.id, 2n, { value: COST * 2n - 1n }))
        .to.be.revertedWithCustomError(editions, "InsufficientPayment")
        .withArgs(COST * 2n, COST * 2n - 1n);
      await expect(editions.connect(alice).mint(CAPPED.id, 1n))
        .to.be.revertedWithCustomError(editions, "InsufficientPayment")
        .withArgs(COST, 0n);
    });

    it("is free when the edition's cost is zero", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      await editions.connect(owner).createEdition(0n, 0n, 5n);
      await editions.connect(alice).mint(3n, 5n);
      expect(await editions.balanceOf(alice.address, 3n)).to.equal(5n);
    });

    it("rejects an edition that does not exist with NonexistentToken(id)", async function () {
      const { editions, alice } = await loadFixture(editionsFixture);
      for (const id of [0n, 3n, UINT256_MAX]) {
        await expect(editions.connect(alice).mint(id, 1n, { value: COST }))
          .to.be.revertedWithCustomError(editions, "NonexistentToken")
          .withArgs(id);
      }
    });

    it("rejects 0 and one above the edition's per-transaction cap with InvalidMintAmount, and accepts the cap", async function () {
      const { editions, alice } = await loadFixture(editionsFixture);
      await expect(editions.connect(alice).mint(CAPPED.id, 0n))
        .to.be.revertedWithCustomError(editions, "InvalidMintAmount")
        .withArgs(0n, CAPPED.maxPerTx);
      await expect(editions.connect(alice).mint(CAPPED.id, CAPPED.maxPerTx + 1n, { value: COST * 4n }))
        .to.be.revertedWithCustomError(editions, "InvalidMintAmount")
        .withArgs(CAPPED.maxPerTx + 1n, CAPPED.maxPerTx);
      await editions.connect(alice).mint(CAPPED.id, CAPPED.maxPerTx, { value: COST * CAPPED.maxPerTx });
      expect(await editions.balanceOf(alice.address, CAPPED.id)).to.equal(CAPPED.maxPerTx);
    });

    it("reaches the cap exactly, then rejects more with MaxSupplyExceeded(amount, remaining)", async function () {
      const { editions, alice, bob } = await loadFixture(editionsFixture);
      await editions.connect(alice).mint(CAPPED.id, 3n, { value: COST * 3n });
      await expect(editions.connect(bob).mint(CAPPED.id, 3n, { value: COST * 3n }))
        .to.be.revertedWithCustomError(editions, "MaxSupplyExceeded")
        .withArgs(3n, 2n);
      await editions.connect(bob).mint(CAPPED.id, 2n, { value: COST * 2n });
      expect(await supplyOf(editions, CAPPED.id)).to.equal(CAPPED.maxSupply);
      await expect(editions.connect(bob).mint(CAPPED.id, 1n, { value: COST }))
        .to.be.revertedWithCustomError(editions, "MaxSupplyExceeded")
        .withArgs(1n, 0n);
    });

    it("has no cap on an open edition (maxSupply 0)", async function () {
      const { editions, alice } = await loadFixture(editionsFixture);
      for (let i = 0; i < 3; i++) {
        await editions.connect(alice).mint(OPEN.id, OPEN.maxPerTx, { value: OPEN.cost * OPEN.maxPerTx });
      }
      expect(await supplyOf(editions, OPEN.id)).to.equal(OPEN.maxPerTx * 3n);
      expect(await editions.maxSupply(OPEN.id)).to.equal(0n);
      await expect(editions.connect(alice).mint(OPEN.id, OPEN.maxPerTx + 1n, { value: OPEN.cost * 11n }))
        .to.be.revertedWithCustomError(editions, "InvalidMintAmount")
        .withArgs(OPEN.maxPerTx + 1n, OPEN.maxPerTx);
    });

    it("rejects a mint while the contract is paused with ContractPaused, and works once resumed", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      await editions.connect(owner).setPaused(true);
      for (const e of [CAPPED, OPEN]) {
        await expect(editions.connect(alice).mint(e.id, 1n, { value: e.cost })).to.be.revertedWithCustomError(
          editions,
          "ContractPaused",
        );
      }
      await editions.connect(owner).setPaused(false);
      await editions.connect(alice).mint(CAPPED.id, 1n, { value: COST });
      expect(await editions.balanceOf(alice.address, CAPPED.id)).to.equal(1n);
    });

    it("rejects a mint of a paused edition with EditionPaused(id), leaving the others open", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      await editions.connect(owner).setEditionPaused(CAPPED.id, true);
      await expect(editions.connect(alice).mint(CAPPED.id, 1n, { value: COST }))
        .to.be.revertedWithCustomError(editions, "EditionPaused")
        .withArgs(CAPPED.id);
      await editions.connect(alice).mint(OPEN.id, 1n, { value: OPEN.cost });
      await editions.connect(owner).setEditionPaused(CAPPED.id, false);
      await editions.connect(alice).mint(CAPPED.id, 1n, { value: COST });
      expect(await editions.balanceOf(alice.address, CAPPED.id)).to.equal(1n);
    });

    it("reports a missing edition first, then the contract's pause, then the edition's, before any other problem", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      await editions.connect(owner).setPaused(true);
      await editions.connect(owner).setEditionPaused(CAPPED.id, true);
      await editions.connect(owner).setWhitelistOnly(true);
      await expect(editions.connect(alice).mint(3n, 0n)).to.be.revertedWithCustomError(editions, "NonexistentToken");
      await expect(editions.connect(alice).mint(CAPPED.id, 0n)).to.be.revertedWithCustomError(
        editions,
        "ContractPaused",
      );
      await editions.connect(owner).setPaused(false);
      await expect(editions.connect(alice).mint(CAPPED.id, 0n)).to.be.revertedWithCustomError(
        editions,
        "EditionPaused",
      );
    });
  });

  describe("whitelist", function () {
    it("in whitelist-only mode, rejects an unlisted caller with NotWhitelisted, on every edition", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      await editions.connect(owner).setWhitelistOnly(true);
      for (const e of [CAPPED, OPEN]) {
        await expect(editions.connect(alice).mint(e.id, 1n, { value: e.cost }))
          .to.be.revertedWithCustomError(editions, "NotWhitelisted")
          .withArgs(alice.address);
      }
    });

    it("lets a listed caller mint, who must still pay, and rejects them again once removed", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      await editions.connect(owner).setWhitelistOnly(true);
      await expect(editions.connect(owner).addUserAddressToWhitelist(alice.address))
        .to.emit(editions, "WhitelistAdded")
        .withArgs(alice.address);
      expect(await editions.whitelisted(alice.address)).to.equal(true);
      await expect(editions.connect(alice).mint(CAPPED.id, 1n))
        .to.be.revertedWithCustomError(editions, "InsufficientPayment")
        .withArgs(COST, 0n);
      await editions.connect(alice).mint(CAPPED.id, 1n, { value: COST });
      await expect(editions.connect(owner).removeFromWhitelist(alice.address))
        .to.emit(editions, "WhitelistRemoved")
        .withArgs(alice.address);
      await expect(editions.connect(alice).mint(CAPPED.id, 1n, { value: COST }))
        .to.be.revertedWithCustomError(editions, "NotWhitelisted")
        .withArgs(alice.address);
    });

    it("lists many addresses at once with addToWhitelist, one WhitelistAdded per new address", async function () {
      const { editions, owner, alice, bob, carol } = await loadFixture(editionsFixture);
      await editions.connect(owner).addUserAddressToWhitelist(bob.address);
      const tx = editions.connect(owner).addToWhitelist([alice.address, bob.address, carol.address]);
      await expect(tx).to.emit(editions, "WhitelistAdded").withArgs(alice.address);
      await expect(tx).to.emit(editions, "WhitelistAdded").withArgs(carol.address);
      const receipt = await (await tx).wait();
      expect(receipt!.logs).to.have.length(2);
      for (const s of [alice, bob, carol]) expect(await editions.whitelisted(s.address)).to.equal(true);
    });

    it("changes nothing and emits nothing when adding a listed address, removing an unlisted one or setting a switch as it is", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      await editions.connect(owner).addUserAddressToWhitelist(alice.address);
      await expect(editions.connect(owner).addUserAddressToWhitelist(alice.address)).not.to.emit(
        editions,
        "WhitelistAdded",
      );
      await expect(editions.connect(owner).removeFromWhitelist(owner.address)).not.to.emit(
        editions,
        "WhitelistRemoved",
      );
      await expect(editions.connect(owner).setWhitelistOnly(false)).not.to.emit(editions, "WhitelistOnlyChanged");
      await expect(editions.connect(owner).setPaused(false)).not.to.emit(editions, "PausedChanged");
      await expect(editions.connect(owner).setEditionPaused(CAPPED.id, false)).not.to.emit(
        editions,
        "EditionPausedChanged",
      );
      await expect(editions.connect(owner).setCost(CAPPED.id, CAPPED.cost)).not.to.emit(editions, "CostChanged");
    });

    it("lets anyone mint again once whitelist-only mode is off, with WhitelistOnlyChanged each way", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      await expect(editions.connect(owner).setWhitelistOnly(true))
        .to.emit(editions, "WhitelistOnlyChanged")
        .withArgs(true);
      expect(await editions.whitelistOnly()).to.equal(true);
      await expect(editions.connect(owner).setWhitelistOnly(false))
        .to.emit(editions, "WhitelistOnlyChanged")
        .withArgs(false);
      await editions.connect(alice).mint(CAPPED.id, 1n, { value: COST });
      expect(await editions.balanceOf(alice.address, CAPPED.id)).to.equal(1n);
    });
  });

  describe("mintForFree", function () {
    it("mints to the receiver without payment, with TransferSingle from the owner as operator", async function () {
      const { editions, owner, bob } = await loadFixture(editionsFixture);
      const tx = editions.connect(owner).mintForFree(CAPPED.id, 2n, bob.address);
      await expect(tx).to.emit(editions, "TransferSingle").withArgs(owner.address, ZERO, bob.address, CAPPED.id, 2n);
      await expect(tx).to.changeEtherBalance(editions, 0n);
      expect(await editions.balanceOf(bob.address, CAPPED.id)).to.equal(2n);
    });

    it("works while the contract and the edition are paused, and for an unlisted receiver in whitelist-only mode", async function () {
      const { editions, owner, bob } = await loadFixture(editionsFixture);
      await editions.connect(owner).setPaused(true);
      await editions.connect(owner).setEditionPaused(CAPPED.id, true);
      await editions.connect(owner).setWhitelistOnly(true);
      await editions.connect(owner).mintForFree(CAPPED.id, 3n, bob.address);
      expect(await editions.balanceOf(bob.address, CAPPED.id)).to.equal(3n);
    });

    it("keeps the per-transaction cap and the edition's cap", async function () {
      const { editions, owner, bob } = await loadFixture(editionsFixture);
      await expect(editions.connect(owner).mintForFree(CAPPED.id, 0n, bob.address))
        .to.be.revertedWithCustomError(editions, "InvalidMintAmount")
        .withArgs(0n, CAPPED.maxPerTx);
      await expect(editions.connect(owner).mintForFree(CAPPED.id, CAPPED.maxPerTx + 1n, bob.address))
        .to.be.revertedWithCustomError(editions, "InvalidMintAmount")
        .withArgs(CAPPED.maxPerTx + 1n, CAPPED.maxPerTx);
      await editions.connect(owner).mintForFree(CAPPED.id, 3n, bob.address);
      await expect(editions.connect(owner).mintForFree(CAPPED.id, 3n, bob.address))
        .to.be.revertedWithCustomError(editions, "MaxSupplyExceeded")
        .withArgs(3n, 2n);
    });

    it("rejects an edition that does not exist, a non-owner, the zero address and a contract that refuses ERC-1155", async function () {
      const { editions, owner, alice, bob } = await loadFixture(editionsFixture);
      await expect(editions.connect(owner).mintForFree(3n, 1n, bob.address))
        .to.be.revertedWithCustomError(editions, "NonexistentToken")
        .withArgs(3n);
      await expect(editions.connect(alice).mintForFree(CAPPED.id, 1n, alice.address))
        .to.be.revertedWithCustomError(editions, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
      await expect(editions.connect(owner).mintForFree(CAPPED.id, 1n, ZERO))
        .to.be.revertedWithCustomError(editions, "ERC1155InvalidReceiver")
        .withArgs(ZERO);
      const self = await editions.getAddress();
      await expect(editions.connect(owner).mintForFree(CAPPED.id, 1n, self))
        .to.be.revertedWithCustomError(editions, "ERC1155InvalidReceiver")
        .withArgs(self);
    });
  });

  describe("airdrop", function () {
    it("mints each recipient its amount, one TransferSingle each, above the per-transaction cap and while paused", async function () {
      const { editions, owner, alice, bob, carol } = await loadFixture(editionsFixture);
      await editions.connect(owner).setPaused(true);
      await editions.connect(owner).setEditionPaused(OPEN.id, true);
      const amounts = [1n, OPEN.maxPerTx + 5n, 2n];
      const recipients = [alice.address, bob.address, carol.address];
      const tx = editions.connect(owner).airdrop(OPEN.id, recipients, amounts);
      for (let i = 0; i < 3; i++) {
        await expect(tx)
          .to.emit(editions, "TransferSingle")
          .withArgs(owner.address, ZERO, recipients[i], OPEN.id, amounts[i]);
      }
      for (let i = 0; i < 3; i++) expect(await editions.balanceOf(recipients[i], OPEN.id)).to.equal(amounts[i]);
      expect(await supplyOf(editions, OPEN.id)).to.equal(OPEN.maxPerTx + 8n);
    });

    it("gives a recipient listed twice both amounts", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      await editions.connect(owner).airdrop(CAPPED.id, [alice.address, alice.address], [2n, 3n]);
      expect(await editions.balanceOf(alice.address, CAPPED.id)).to.equal(5n);
    });

    it("rejects lists of different lengths, or empty, with InvalidAirdrop(recipients, amounts)", async function () {
      const { editions, owner, alice, bob } = await loadFixture(editionsFixture);
      await expect(editions.connect(owner).airdrop(CAPPED.id, [alice.address, bob.address], [1n]))
        .to.be.revertedWithCustomError(editions, "InvalidAirdrop")
        .withArgs(2n, 1n);
      await expect(editions.connect(owner).airdrop(CAPPED.id, [], []))
        .to.be.revertedWithCustomError(editions, "InvalidAirdrop")
        .withArgs(0n, 0n);
    });

    it("rejects an amount of zero with InvalidMintAmount(0, maxPerTx)", async function () {
      const { editions, owner, alice, bob } = await loadFixture(editionsFixture);
      await expect(editions.connect(owner).airdrop(CAPPED.id, [alice.address, bob.address], [1n, 0n]))
        .to.be.revertedWithCustomError(editions, "InvalidMintAmount")
        .withArgs(0n, CAPPED.maxPerTx);
    });

    it("rejects a total past the edition's cap with MaxSupplyExceeded(total, remaining), minting nothing", async function () {
      const { editions, owner, alice, bob } = await loadFixture(editionsFixture);
      await editions.connect(owner).mintForFree(CAPPED.id, 1n, alice.address);
      await expect(editions.connect(owner).airdrop(CAPPED.id, [alice.address, bob.address], [2n, 3n]))
        .to.be.revertedWithCustomError(editions, "MaxSupplyExceeded")
        .withArgs(5n, 4n);
      expect(await supplyOf(editions, CAPPED.id)).to.equal(1n);
      await editions.connect(owner).airdrop(CAPPED.id, [alice.address, bob.address], [1n, 3n]);
      expect(await supplyOf(editions, CAPPED.id)).to.equal(CAPPED.maxSupply);
    });

    it("rejects an edition that does not exist and a non-owner", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      await expect(editions.connect(owner).airdrop(3n, [alice.address], [1n]))
        .to.be.revertedWithCustomError(editions, "NonexistentToken")
        .withArgs(3n);
      await expect(editions.connect(alice).airdrop(CAPPED.id, [alice.address], [1n]))
        .to.be.revertedWithCustomError(editions, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
    });

    it("reverts whole when one recipient is a contract that refuses ERC-1155", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      const self = await editions.getAddress();
      await expect(editions.connect(owner).airdrop(CAPPED.id, [alice.address, self], [1n, 1n]))
        .to.be.revertedWithCustomError(editions, "ERC1155InvalidReceiver")
        .withArgs(self);
      expect(await editions.balanceOf(alice.address, CAPPED.id)).to.equal(0n);
    });
  });

  describe("owner settings", function () {
    it("setCost changes one edition's price with CostChanged(id, previous, new), and mint charges it", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      const newCost = COST * 3n;
      await expect(editions.connect(owner).setCost(CAPPED.id, newCost))
        .to.emit(editions, "CostChanged")
        .withArgs(CAPPED.id, COST, newCost);
      expect(await editions.cost(CAPPED.id)).to.equal(newCost);
      expect(await editions.cost(OPEN.id)).to.equal(OPEN.cost);
      await expect(editions.connect(alice).mint(CAPPED.id, 1n, { value: COST }))
        .to.be.revertedWithCustomError(editions, "InsufficientPayment")
        .withArgs(newCost, COST);
      await editions.connect(alice).mint(CAPPED.id, 1n, { value: newCost });
    });

    it("setCost refuses a cost above 2^128 - 1, an edition that does not exist and a non-owner", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      await expect(editions.connect(owner).setCost(CAPPED.id, UINT128_MAX + 1n))
        .to.be.revertedWithCustomError(editions, "CostTooHigh")
        .withArgs(UINT128_MAX + 1n, UINT128_MAX);
      await editions.connect(owner).setCost(CAPPED.id, UINT128_MAX);
      expect(await editions.cost(CAPPED.id)).to.equal(UINT128_MAX);
      await expect(editions.connect(owner).setCost(3n, 1n))
        .to.be.revertedWithCustomError(editions, "NonexistentToken")
        .withArgs(3n);
      await expect(editions.connect(alice).setCost(CAPPED.id, 1n))
        .to.be.revertedWithCustomError(editions, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
    });

    it("setPaused and setEditionPaused emit PausedChanged and EditionPausedChanged(id, state) and read back", async function () {
      const { editions, owner } = await loadFixture(editionsFixture);
      await expect(editions.connect(owner).setPaused(true)).to.emit(editions, "PausedChanged").withArgs(true);
      expect(await editions.paused()).to.equal(true);
      await expect(editions.connect(owner).setEditionPaused(OPEN.id, true))
        .to.emit(editions, "EditionPausedChanged")
        .withArgs(OPEN.id, true);
      expect(await editions.editionPaused(OPEN.id)).to.equal(true);
      expect(await editions.editionPaused(CAPPED.id)).to.equal(false);
      expect((await editions.edition(OPEN.id))[3]).to.equal(true);
    });

    it("setEditionPaused refuses an edition that does not exist; every setter refuses a non-owner", async function () {
      const { editions, alice, owner } = await loadFixture(editionsFixture);
      await expect(editions.connect(owner).setEditionPaused(3n, true))
        .to.be.revertedWithCustomError(editions, "NonexistentToken")
        .withArgs(3n);
      for (const call of [
        () => editions.connect(alice).setPaused(true),
        () => editions.connect(alice).setEditionPaused(CAPPED.id, true),
        () => editions.connect(alice).setWhitelistOnly(true),
        () => editions.connect(alice).addUserAddressToWhitelist(alice.address),
        () => editions.connect(alice).addToWhitelist([alice.address]),
        () => editions.connect(alice).removeFromWhitelist(alice.address),
        () => editions.connect(alice).setBaseURI("https://evil.example/"),
        () => editions.connect(alice).refreshMetadata(1n, 2n),
        () => editions.connect(alice).setDefaultRoyalty(alice.address, 100n),
        () => editions.connect(alice).withdraw(),
      ]) {
        await expect(call())
          .to.be.revertedWithCustomError(editions, "OwnableUnauthorizedAccount")
          .withArgs(alice.address);
      }
    });
  });

  describe("metadata", function () {
    it("uri(id) is the base URI, the id in decimal and .json", async function () {
      const { editions, owner } = await loadFixture(editionsFixture);
      expect(await editions.uri(CAPPED.id)).to.equal(`${BASE_URI}1.json`);
      for (let i = 0; i < 8; i++) await editions.connect(owner).createEdition(0n, 0n, 1n);
      expect(await editions.uri(10n)).to.equal(`${BASE_URI}10.json`);
    });

    it("setBaseURI changes every uri, with BaseURIChanged and ERC-4906's BatchMetadataUpdate(1, max)", async function () {
      const { editions, owner } = await loadFixture(editionsFixture);
      const tx = editions.connect(owner).setBaseURI("https://example.com/meta/");
      await expect(tx).to.emit(editions, "BaseURIChanged").withArgs("https://example.com/meta/");
      await expect(tx).to.emit(editions, "BatchMetadataUpdate").withArgs(1n, UINT256_MAX);
      expect(await editions.uri(OPEN.id)).to.equal("https://example.com/meta/2.json");
    });

    it("refreshMetadata emits MetadataUpdate for one id, BatchMetadataUpdate for a range, and refuses a reversed one", async function () {
      const { editions, owner } = await loadFixture(editionsFixture);
      await expect(editions.connect(owner).refreshMetadata(2n, 2n)).to.emit(editions, "MetadataUpdate").withArgs(2n);
      await expect(editions.connect(owner).refreshMetadata(1n, 2n))
        .to.emit(editions, "BatchMetadataUpdate")
        .withArgs(1n, 2n);
      await expect(editions.connect(owner).refreshMetadata(2n, 1n))
        .to.be.revertedWithCustomError(editions, "InvalidTokenRange")
        .withArgs(2n, 1n);
    });
  });

  describe("royalties (ERC-2981)", function () {
    it("has no royalty until setDefaultRoyalty, which emits DefaultRoyaltyChanged and applies to every edition", async function () {
      const { editions, owner, bob } = await loadFixture(editionsFixture);
      expect(await editions.royaltyInfo(CAPPED.id, 10_000n)).to.deep.equal([ZERO, 0n]);
      await expect(editions.connect(owner).setDefaultRoyalty(bob.address, 500n))
        .to.emit(editions, "DefaultRoyaltyChanged")
        .withArgs(bob.address, 500n);
      for (const e of [CAPPED, OPEN]) {
        expect(await editions.royaltyInfo(e.id, ethers.parseEther("2"))).to.deep.equal([
          bob.address,
          ethers.parseEther("0.1"),
        ]);
      }
    });

    it("refuses more than 100% with ERC2981InvalidDefaultRoyalty", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      await expect(editions.connect(owner).setDefaultRoyalty(alice.address, 10_001n))
        .to.be.revertedWithCustomError(editions, "ERC2981InvalidDefaultRoyalty")
        .withArgs(10_001n, 10_000n);
    });
  });

  describe("ERC-165", function () {
    it("supports ERC-165, ERC-1155, its metadata URI, ERC-2981 and ERC-4906", async function () {
      const { editions } = await loadFixture(editionsFixture);
      for (const id of ["0x01ffc9a7", "0xd9b67a26", "0x0e89341c", "0x2a55205a", "0x49064906"]) {
        expect(await editions.supportsInterface(id), id).to.equal(true);
      }
    });

    it("does not claim ERC-721 or the invalid id 0xffffffff", async function () {
      const { editions } = await loadFixture(editionsFixture);
      expect(await editions.supportsInterface("0x80ac58cd")).to.equal(false);
      expect(await editions.supportsInterface("0xffffffff")).to.equal(false);
    });
  });

  describe("transfers", function () {
    it("moves part of a holder's balance with safeTransferFrom, supply unchanged", async function () {
      const { editions, alice, bob } = await loadFixture(fundedFixture);
      await expect(editions.connect(alice).safeTransferFrom(alice.address, bob.address, CAPPED.id, 2n, "0x"))
        .to.emit(editions, "TransferSingle")
        .withArgs(alice.address, alice.address, bob.address, CAPPED.id, 2n);
      expect(await editions.balanceOfBatch([alice.address, bob.address], [CAPPED.id, CAPPED.id])).to.deep.equal([
        1n,
        2n,
      ]);
      expect(await supplyOf(editions, CAPPED.id)).to.equal(3n);
    });
  });

  describe("withdraw", function () {
    it("sends the whole balance to the owner and emits Withdrawn(owner, amount)", async function () {
      const { editions, owner, funds } = await loadFixture(fundedFixture);
      const tx = editions.connect(owner).withdraw();
      await expect(tx).to.emit(editions, "Withdrawn").withArgs(owner.address, funds);
      await expect(tx).to.changeEtherBalances([editions, owner], [-funds, funds]);
      expect(await ethers.provider.getBalance(await editions.getAddress())).to.equal(0n);
    });

    it("rejects a withdrawal from an empty contract, and a second one, with NothingToWithdraw", async function () {
      const { editions, owner } = await loadFixture(fundedFixture);
      await editions.connect(owner).withdraw();
      await expect(editions.connect(owner).withdraw()).to.be.revertedWithCustomError(editions, "NothingToWithdraw");
    });

    it("reverts with WithdrawFailed(owner, amount) when the owner refuses ether, keeping the balance", async function () {
      const { editions, owner, funds } = await loadFixture(fundedFixture);
      // An owner account whose code is `PUSH1 0 PUSH1 0 REVERT`: any ether sent to it bounces.
      const rejecting = ethers.getAddress("0x00000000000000000000000000000000000bad02");
      await setCode(rejecting, "0x60006000fd");
      await setBalance(rejecting, ethers.parseEther("1"));
      await impersonateAccount(rejecting);
      await editions.connect(owner).transferOwnership(rejecting);
      await expect(editions.connect(await ethers.getSigner(rejecting)).withdraw())
        .to.be.revertedWithCustomError(editions, "WithdrawFailed")
        .withArgs(rejecting, funds);
      expect(await ethers.provider.getBalance(await editions.getAddress())).to.equal(funds);
    });

    describe("against a re-entering owner", function () {
      it("pays the balance exactly once", async function () {
        const { editions, attacker, funds } = await loadFixture(attackerOwnedFixture);
        const tx = attacker.attack();
        await expect(tx).to.changeEtherBalances([editions, attacker], [-funds, funds]);
        await expect(tx)
          .to.emit(editions, "Withdrawn")
          .withArgs(await attacker.getAddress(), funds);
        expect(await attacker.receiveCount()).to.equal(1n);
      });

      it("makes the re-entering call fail with ReentrancyGuardReentrantCall", async function () {
        const { editions, attacker } = await loadFixture(attackerOwnedFixture);
        await attacker.attack();
        expect(await attacker.reentrySucceeded()).to.equal(false);
        const selector = editions.interface.getError("ReentrancyGuardReentrantCall")!.selector;
        expect(await attacker.reentryError()).to.equal(selector);
      });
    });
  });
});
