import { expect } from "chai";
import { loadFixture, mine } from "@nomicfoundation/hardhat-network-helpers";
import { ethers } from "hardhat";
import { collectionFixture } from "./fixtures";

const MAX_UINT = ethers.MaxUint256;
const HASH = ethers.keccak256(ethers.toUtf8Bytes("documents"));
/** Blocks from the commit to the reveal block, as REVEAL_DELAY_BLOCKS sets by default. */
const DELAY = 5;

describe("NFTCollection: metadata (ERC-4906, provenance, reveal)", function () {
  it("declares ERC-4906 (0x49064906) beside ERC-721 and ERC-2981", async function () {
    const { nft } = await loadFixture(collectionFixture);
    expect(await nft.supportsInterface("0x49064906")).to.equal(true);
    expect(await nft.supportsInterface("0x80ac58cd")).to.equal(true);
    expect(await nft.supportsInterface("0x2a55205a")).to.equal(true);
    expect(await nft.supportsInterface("0xffffffff")).to.equal(false);
  });

  it("setBaseURI emits BatchMetadataUpdate over every token id", async function () {
    const { nft, owner } = await loadFixture(collectionFixture);
    await expect(nft.connect(owner).setBaseURI("ar://new/")).to.emit(nft, "BatchMetadataUpdate").withArgs(1n, MAX_UINT);
  });

  it("refreshMetadata emits MetadataUpdate for one token and BatchMetadataUpdate for a range; owner only", async function () {
    const { nft, owner, alice } = await loadFixture(collectionFixture);
    await expect(nft.connect(owner).refreshMetadata(3, 3)).to.emit(nft, "MetadataUpdate").withArgs(3n);
    await expect(nft.connect(owner).refreshMetadata(2, 9)).to.emit(nft, "BatchMetadataUpdate").withArgs(2n, 9n);
    await expect(nft.connect(owner).refreshMetadata(9, 2))
      .to.be.revertedWithCustomError(nft, "InvalidTokenRange")
      .withArgs(9n, 2n);
    await expect(nft.connect(alice).refreshMetadata(1, 2)).to.be.revertedWithCustomError(
      nft,
      "OwnableUnauthorizedAccount",
    );
  });

  it("sets the provenance once, with ProvenanceSet and a reveal block after its own; owner only; not zero", async function () {
    const { nft, owner, alice } = await loadFixture(collectionFixture);
    expect(await nft.provenance()).to.equal(ethers.ZeroHash);
    expect(await nft.provenanceCount()).to.equal(0n);
    expect(await nft.revealBlock()).to.equal(0n);
    await expect(nft.connect(alice).setProvenance(HASH, 40, DELAY)).to.be.revertedWithCustomError(
      nft,
      "OwnableUnauthorizedAccount",
    );
    await expect(nft.connect(owner).setProvenance(ethers.ZeroHash, 40, DELAY)).to.be.revertedWithCustomError(
      nft,
      "InvalidProvenance",
    );
    await expect(nft.connect(owner).setProvenance(HASH, 0, DELAY)).to.be.revertedWithCustomError(
      nft,
      "InvalidProvenance",
    );
    await expect(nft.connect(owner).setProvenance(HASH, 40, 0))
      .to.be.revertedWithCustomError(nft, "InvalidRevealDelay")
      .withArgs(0n);
    await expect(nft.connect(owner).setProvenance(HASH, 40, 257))
      .to.be.revertedWithCustomError(nft, "InvalidRevealDelay")
      .withArgs(257n);
    expect(await nft.MAX_REVEAL_DELAY()).to.equal(256n);
    const tx = nft.connect(owner).setProvenance(HASH, 40, DELAY);
    await expect(tx).to.emit(nft, "ProvenanceSet").withArgs(HASH, 40n);
    const receipt = (await (await tx).wait())!;
    expect(await nft.revealBlock()).to.equal(BigInt(receipt.blockNumber + DELAY));
    expect(await nft.provenance()).to.equal(HASH);
    expect(await nft.provenanceCount()).to.equal(40n);
    await expect(nft.connect(owner).setProvenance(HASH, 41, DELAY)).to.be.revertedWithCustomError(
      nft,
      "ProvenanceAlreadySet",
    );
  });

  it("reveals only after the provenance and once the reveal block is mined, by anyone, from that block's hash", async function () {
    const { nft, owner, alice } = await loadFixture(collectionFixture);
    await expect(nft.connect(owner).reveal()).to.be.revertedWithCustomError(nft, "ProvenanceNotSet");
    await nft.connect(owner).setProvenance(HASH, 40, DELAY);
    const revealBlock = await nft.revealBlock();
    // The reveal block is not mined while the next block is at most it: too early, even for the owner.
    await mine(DELAY - 1);
    expect(BigInt(await ethers.provider.getBlockNumber())).to.equal(revealBlock - 1n);
    await expect(nft.connect(owner).reveal())
      .to.be.revertedWithCustomError(nft, "RevealTooEarly")
      .withArgs(revealBlock, revealBlock);
    await mine(1);
    // Not the owner: anyone may reveal once the block is mined.
    const tx = nft.connect(alice).reveal();
    await expect(tx).to.emit(nft, "BatchMetadataUpdate").withArgs(1n, MAX_UINT);
    const expected = BigInt((await ethers.provider.getBlock(Number(revealBlock)))!.hash!) % 40n;
    await expect(tx).to.emit(nft, "Revealed").withArgs(expected);
    expect(await nft.startingIndex()).to.equal(expected);
    expect(await nft.revealed()).to.equal(true);
    await expect(nft.connect(owner).reveal()).to.be.revertedWithCustomError(nft, "AlreadyRevealed");
  });

  it("moves the reveal block when it is more than 256 blocks old, with RevealBlockReset, and reveals from the new one", async function () {
    const { nft, owner, alice } = await loadFixture(collectionFixture);
    await nft.connect(owner).setProvenance(HASH, 40, DELAY);
    const first = await nft.revealBlock();
    // The next block is first + 256: blockhash(first) is still answered there.
    await mine(Number(first) + 255 - (await ethers.provider.getBlockNumber()));
    const snapshot = await ethers.provider.send("evm_snapshot", []);
    const inTime = nft.connect(alice).reveal();
    await expect(inTime).to.emit(nft, "Revealed");
    await expect(inTime).to.not.emit(nft, "RevealBlockReset");
    await ethers.provider.send("evm_revert", [snapshot]);
    // One block later it is 257 blocks old: the reveal moves it DELAY blocks past the resetting block.
    await mine(1);
    const reset = nft.connect(alice).reveal();
    const receipt = (await (await reset).wait())!;
    const next = BigInt(receipt.blockNumber + DELAY);
    await expect(reset).to.emit(nft, "RevealBlockReset").withArgs(first, next);
    await expect(reset).to.not.emit(nft, "Revealed");
    await expect(reset).to.not.emit(nft, "BatchMetadataUpdate");
    expect(await nft.revealBlock()).to.equal(next);
    expect(await nft.revealed()).to.equal(false);
    await expect(nft.connect(alice).reveal()).to.be.revertedWithCustomError(nft, "RevealTooEarly");
    await mine(DELAY);
    const tx = nft.connect(alice).reveal();
    const expected = BigInt((await ethers.provider.getBlock(Number(next)))!.hash!) % 40n;
    await expect(tx).to.emit(nft, "Revealed").withArgs(expected);
    expect(await nft.startingIndex()).to.equal(expected);
  });

  it("keeps the starting index within the count, over many blocks and counts", async function () {
    const [owner] = await ethers.getSigners();
    const factory = await ethers.getContractFactory("NFTCollection");
    for (const count of [1n, 2n, 7n, 10_000n]) {
      const nft = await factory.deploy("N", "S", "ipfs://x/", 0, 10_000, 10);
      await nft.connect(owner).setProvenance(HASH, count, 1 + Number(count % 5n));
      await mine(Number(count % 5n) + 1);
      await nft.connect(owner).reveal();
      const index = await nft.startingIndex();
      expect(index < count, `startingIndex ${index} of count ${count}`).to.equal(true);
    }
  });

  it("costs the same gas whatever index it draws: a zero index (count 1) as much as another", async function () {
    const [owner] = await ethers.getSigners();
    const factory = await ethers.getContractFactory("NFTCollection");
    const gasOfReveal = async (count: bigint) => {
      const nft = await factory.deploy("N", "S", "ipfs://x/", 0, 10_000, 10);
      await nft.connect(owner).setProvenance(HASH, count, 1);
      await mine(1);
      const receipt = (await (await nft.connect(owner).reveal()).wait())!;
      return { gas: receipt.gasUsed, index: await nft.startingIndex(), revealed: await nft.revealed() };
    };
    const zero = await gasOfReveal(1n);
    expect(zero.index).to.equal(0n);
    expect(zero.revealed).to.equal(true);
    // A 2^255 count draws index 0 only if the block hash's low 255 bits are all zero.
    const other = await gasOfReveal(1n << 255n);
    expect(other.index).to.not.equal(0n);
    expect(other.gas).to.equal(zero.gas);
  });
});
