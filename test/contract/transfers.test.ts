import { expect } from "chai";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { COST, collectionFixture } from "./fixtures";

/** Alice holds tokens 1-4, Bob holds 5-6. */
async function mintedFixture() {
  const base = await collectionFixture();
  await base.nft.connect(base.alice).mint(4, { value: COST * 4n });
  await base.nft.connect(base.bob).mint(2, { value: COST * 2n });
  return base;
}

describe("NFTCollection: transfers and walletOfOwner", function () {
  it("lists a holder's tokens in ascending order", async function () {
    const { nft, alice, bob, carol } = await loadFixture(mintedFixture);
    expect(await nft.walletOfOwner(alice.address)).to.deep.equal([1n, 2n, 3n, 4n]);
    expect(await nft.walletOfOwner(bob.address)).to.deep.equal([5n, 6n]);
    expect(await nft.walletOfOwner(carol.address)).to.deep.equal([]);
  });

  it("moves a token with transferFrom and updates both wallets", async function () {
    const { nft, alice, bob } = await loadFixture(mintedFixture);
    await expect(nft.connect(alice).transferFrom(alice.address, bob.address, 2))
      .to.emit(nft, "Transfer")
      .withArgs(alice.address, bob.address, 2n);
    expect(await nft.ownerOf(2)).to.equal(bob.address);
    expect(await nft.walletOfOwner(alice.address)).to.deep.equal([1n, 3n, 4n]);
    expect(await nft.walletOfOwner(bob.address)).to.deep.equal([2n, 5n, 6n]);
  });

  it("moves a token with safeTransferFrom and keeps the receiver's wallet sorted", async function () {
    const { nft, alice, bob, carol } = await loadFixture(mintedFixture);
    await nft.connect(bob)["safeTransferFrom(address,address,uint256)"](bob.address, carol.address, 6);
    await nft.connect(alice)["safeTransferFrom(address,address,uint256)"](alice.address, carol.address, 1);
    await nft.connect(alice)["safeTransferFrom(address,address,uint256,bytes)"](alice.address, carol.address, 4, "0x");
    expect(await nft.walletOfOwner(carol.address)).to.deep.equal([1n, 4n, 6n]);
    expect(await nft.walletOfOwner(alice.address)).to.deep.equal([2n, 3n]);
    expect(await nft.walletOfOwner(bob.address)).to.deep.equal([5n]);
  });

  it("keeps the total supply and token URIs unchanged by transfers", async function () {
    const { nft, alice, bob } = await loadFixture(mintedFixture);
    const uri = await nft.tokenURI(3);
    await nft.connect(alice).transferFrom(alice.address, bob.address, 3);
    expect(await nft.totalSupply()).to.equal(6n);
    expect(await nft.tokenURI(3)).to.equal(uri);
  });

  it("lets an approved operator transfer on the holder's behalf", async function () {
    const { nft, alice, bob, carol } = await loadFixture(mintedFixture);
    await nft.connect(alice).approve(carol.address, 3);
    await nft.connect(carol).transferFrom(alice.address, bob.address, 3);
    await nft.connect(alice).setApprovalForAll(carol.address, true);
    await nft.connect(carol).transferFrom(alice.address, bob.address, 4);
    expect(await nft.walletOfOwner(bob.address)).to.deep.equal([3n, 4n, 5n, 6n]);
  });

  it("agrees with ERC721AQueryable's tokensOfOwner and tokensOfOwnerIn", async function () {
    const { nft, alice, bob } = await loadFixture(mintedFixture);
    await nft.connect(alice).transferFrom(alice.address, bob.address, 1);
    expect(await nft.tokensOfOwner(bob.address)).to.deep.equal(await nft.walletOfOwner(bob.address));
    expect(await nft.tokensOfOwnerIn(bob.address, 1, 6)).to.deep.equal([1n, 5n]);
  });

  it("refuses a transfer by someone who neither holds nor is approved for the token", async function () {
    const { nft, alice, bob } = await loadFixture(mintedFixture);
    await expect(nft.connect(bob).transferFrom(alice.address, bob.address, 1)).to.be.revertedWithCustomError(
      nft,
      "TransferCallerNotOwnerNorApproved",
    );
  });
});
