import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import type { NFTCollection } from "../../typechain-types";
import {
  BASE_URI,
  COST,
  MAX_PER_TX,
  MAX_SUPPLY,
  NAME,
  SYMBOL,
  collectionFixture,
  smallCollectionFixture,
} from "./fixtures";

const LEAF_TYPES = ["address", "uint256", "uint256"];
const VOUCHER_TYPES = {
  Voucher: [
    { name: "to", type: "address" },
    { name: "amount", type: "uint256" },
    { name: "price", type: "uint256" },
    { name: "validUntil", type: "uint64" },
    { name: "id", type: "bytes32" },
  ],
};

interface Voucher {
  to: string;
  amount: bigint;
  price: bigint;
  validUntil: bigint;
  id: string;
}

async function signVoucher(nft: NFTCollection, signer: HardhatEthersSigner, voucher: Voucher): Promise<string> {
  const { chainId } = await ethers.provider.getNetwork();
  const domain = { name: await nft.name(), version: "1", chainId, verifyingContract: await nft.getAddress() };
  return signer.signTypedData(domain, VOUCHER_TYPES, voucher);
}

/** The default collection, with `carol` as its voucher signer, and a voucher for `alice` of 2 tokens at 1 gwei. */
async function voucherFixture() {
  const base = await collectionFixture();
  await base.nft.connect(base.owner).setVoucherSigner(base.carol.address);
  const voucher: Voucher = {
    to: base.alice.address,
    amount: 2n,
    price: 1_000_000_000n,
    validUntil: BigInt(await time.latest()) + 3600n,
    id: ethers.id("voucher-1"),
  };
  const signature = await signVoucher(base.nft, base.carol, voucher);
  return { ...base, voucher, signature };
}

/** The default collection with an allowlist: alice 3 free, bob 2 at the cost, and 50 other addresses. */
async function allowlistFixture() {
  const base = await collectionFixture();
  const filler = Array.from({ length: 50 }, () => [ethers.hexlify(ethers.randomBytes(20)), "1", "0"]);
  const entries = [[base.alice.address, "3", "0"], [base.bob.address, "2", COST.toString()], ...filler];
  const tree = StandardMerkleTree.of(entries, LEAF_TYPES);
  await base.nft.connect(base.owner).setAllowlist(tree.root);
  const proofOf = (account: string) => tree.getProof(entries.findIndex(([address]) => address === account));
  return { ...base, tree, proofOf };
}

describe("NFTCollection: drops", function () {
  describe("airdrop", function () {
    it("mints each recipient its amount in one transaction, numbering tokens in list order", async function () {
      const { nft, owner, alice, bob, carol } = await loadFixture(collectionFixture);
      const tx = nft.connect(owner).airdrop([alice.address, bob.address, carol.address], [2n, 1n, 3n]);
      await expect(tx).to.emit(nft, "Transfer").withArgs(ethers.ZeroAddress, bob.address, 3n);
      await expect(tx).to.emit(nft, "Transfer").withArgs(ethers.ZeroAddress, carol.address, 6n);
      expect(await nft.walletOfOwner(alice.address)).to.deep.equal([1n, 2n]);
      expect(await nft.walletOfOwner(bob.address)).to.deep.equal([3n]);
      expect(await nft.walletOfOwner(carol.address)).to.deep.equal([4n, 5n, 6n]);
      expect(await nft.totalSupply()).to.equal(6n);
    });

    it("works while paused and may pass maxMintAmountPerTx for one recipient", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(owner).setPaused(true);
      await nft.connect(owner).airdrop([alice.address], [MAX_PER_TX + 5n]);
      expect(await nft.balanceOf(alice.address)).to.equal(MAX_PER_TX + 5n);
    });

    it("mints a recipient's amount in pieces of maxMintAmountPerTx: the last of 300 tokens transfers for under 300,000 gas", async function () {
      const { nft, owner, alice, bob } = await loadFixture(collectionFixture);
      await (await nft.connect(owner).airdrop([alice.address], [300n])).wait();
      expect(await nft.balanceOf(alice.address)).to.equal(300n);
      const receipt = await (await nft.connect(alice).transferFrom(alice.address, bob.address, 300n)).wait();
      // Measured: 100,643 gas in pieces of 10 (at most 9 ownership slots scanned back); 738,063 with
      // the 300 minted in one piece (299 cold reads). The bound is 3x the first, well below the second.
      expect(receipt!.gasUsed).to.be.below(300_000n);
      expect(await nft.ownerOf(300n)).to.equal(bob.address);
      expect(await nft.ownerOf(299n)).to.equal(alice.address);
    });

    it("keeps maxSupply: MaxSupplyExceeded(total, remaining), nothing minted", async function () {
      const { nft, owner, alice, bob } = await loadFixture(smallCollectionFixture);
      await expect(nft.connect(owner).airdrop([alice.address, bob.address], [3n, 3n]))
        .to.be.revertedWithCustomError(nft, "MaxSupplyExceeded")
        .withArgs(6n, 5n);
      expect(await nft.totalSupply()).to.equal(0n);
    });

    it("refuses lists of different lengths, or empty ones, with InvalidAirdrop(recipients, amounts)", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).airdrop([alice.address], [1n, 2n]))
        .to.be.revertedWithCustomError(nft, "InvalidAirdrop")
        .withArgs(1n, 2n);
      await expect(nft.connect(owner).airdrop([], []))
        .to.be.revertedWithCustomError(nft, "InvalidAirdrop")
        .withArgs(0n, 0n);
    });

    it("refuses an amount of zero with InvalidMintAmount", async function () {
      const { nft, owner, alice, bob } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).airdrop([alice.address, bob.address], [1n, 0n]))
        .to.be.revertedWithCustomError(nft, "InvalidMintAmount")
        .withArgs(0n, MAX_PER_TX);
    });

    it("is owner only: OwnableUnauthorizedAccount", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      await expect(nft.connect(alice).airdrop([alice.address], [1n]))
        .to.be.revertedWithCustomError(nft, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
    });
  });

  describe("addToWhitelist", function () {
    it("lists every address and emits WhitelistAdded for each new one only", async function () {
      const { nft, owner, alice, bob, carol } = await loadFixture(collectionFixture);
      await nft.connect(owner).addUserAddressToWhitelist(bob.address);
      const tx = nft.connect(owner).addToWhitelist([alice.address, bob.address, carol.address]);
      await expect(tx).to.emit(nft, "WhitelistAdded").withArgs(alice.address);
      await expect(tx).to.emit(nft, "WhitelistAdded").withArgs(carol.address);
      expect((await (await tx).wait())!.logs).to.have.length(2);
      for (const account of [alice, bob, carol]) expect(await nft.whitelisted(account.address)).to.equal(true);
    });

    it("is owner only: OwnableUnauthorizedAccount", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      await expect(nft.connect(alice).addToWhitelist([alice.address]))
        .to.be.revertedWithCustomError(nft, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
    });
  });

  describe("allowlist", function () {
    it("setAllowlist stores the root and emits AllowlistSet(previous, root); the same root emits nothing", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      const root = ethers.id("root");
      await expect(nft.connect(owner).setAllowlist(root)).to.emit(nft, "AllowlistSet").withArgs(ethers.ZeroHash, root);
      expect(await nft.allowlistRoot()).to.equal(root);
      expect((await (await nft.connect(owner).setAllowlist(root)).wait())!.logs).to.have.length(0);
    });

    it("setAllowlist is owner only", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      await expect(nft.connect(alice).setAllowlist(ethers.ZeroHash))
        .to.be.revertedWithCustomError(nft, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
    });

    it("mints with a proof from StandardMerkleTree, counts it and emits AllowlistMinted", async function () {
      const { nft, alice, proofOf } = await loadFixture(allowlistFixture);
      await expect(nft.connect(alice).allowlistMint(2n, 3n, 0n, proofOf(alice.address)))
        .to.emit(nft, "AllowlistMinted")
        .withArgs(alice.address, 2n);
      expect(await nft.balanceOf(alice.address)).to.equal(2n);
      expect(await nft.allowlistMinted(alice.address)).to.equal(2n);
      // The count lives beside the balance; a transfer away leaves it as it is.
      await nft.connect(alice).transferFrom(alice.address, ethers.Wallet.createRandom().address, 1n);
      expect(await nft.allowlistMinted(alice.address)).to.equal(2n);
    });

    it("takes the leaf's price exactly: IncorrectPayment(required, sent) below or above it, minted at it", async function () {
      const { nft, bob, proofOf } = await loadFixture(allowlistFixture);
      await expect(nft.connect(bob).allowlistMint(2n, 2n, COST, proofOf(bob.address), { value: COST }))
        .to.be.revertedWithCustomError(nft, "IncorrectPayment")
        .withArgs(COST * 2n, COST);
      await expect(nft.connect(bob).allowlistMint(2n, 2n, COST, proofOf(bob.address), { value: COST * 2n + 1n }))
        .to.be.revertedWithCustomError(nft, "IncorrectPayment")
        .withArgs(COST * 2n, COST * 2n + 1n);
      await expect(
        nft.connect(bob).allowlistMint(2n, 2n, COST, proofOf(bob.address), { value: COST * 2n }),
      ).to.changeEtherBalances([bob, nft], [-COST * 2n, COST * 2n]);
    });

    it("refuses a wrong proof with NotAllowlisted(account, allowance, price)", async function () {
      const { nft, alice, bob, proofOf } = await loadFixture(allowlistFixture);
      await expect(nft.connect(alice).allowlistMint(1n, 3n, 0n, proofOf(bob.address)))
        .to.be.revertedWithCustomError(nft, "NotAllowlisted")
        .withArgs(alice.address, 3n, 0n);
    });

    it("refuses a wrong allowance (or price) with NotAllowlisted", async function () {
      const { nft, alice, proofOf } = await loadFixture(allowlistFixture);
      await expect(nft.connect(alice).allowlistMint(1n, 5n, 0n, proofOf(alice.address)))
        .to.be.revertedWithCustomError(nft, "NotAllowlisted")
        .withArgs(alice.address, 5n, 0n);
      await expect(nft.connect(alice).allowlistMint(1n, 3n, 1n, proofOf(alice.address)))
        .to.be.revertedWithCustomError(nft, "NotAllowlisted")
        .withArgs(alice.address, 3n, 1n);
    });

    it("refuses an address off the list with NotAllowlisted", async function () {
      const { nft, carol, proofOf, alice } = await loadFixture(allowlistFixture);
      await expect(nft.connect(carol).allowlistMint(1n, 3n, 0n, proofOf(alice.address)))
        .to.be.revertedWithCustomError(nft, "NotAllowlisted")
        .withArgs(carol.address, 3n, 0n);
    });

    it("refuses a mint past the allowance, in one call or across calls, with AllowanceExceeded", async function () {
      const { nft, alice, proofOf } = await loadFixture(allowlistFixture);
      const proof = proofOf(alice.address);
      await expect(nft.connect(alice).allowlistMint(4n, 3n, 0n, proof))
        .to.be.revertedWithCustomError(nft, "AllowanceExceeded")
        .withArgs(alice.address, 3n, 0n, 4n);
      await nft.connect(alice).allowlistMint(2n, 3n, 0n, proof);
      await expect(nft.connect(alice).allowlistMint(2n, 3n, 0n, proof))
        .to.be.revertedWithCustomError(nft, "AllowanceExceeded")
        .withArgs(alice.address, 3n, 2n, 2n);
      await nft.connect(alice).allowlistMint(1n, 3n, 0n, proof);
      expect(await nft.allowlistMinted(alice.address)).to.equal(3n);
    });

    it("keeps the pause, maxMintAmountPerTx and maxSupply", async function () {
      const { nft, owner, alice } = await loadFixture(smallCollectionFixture); // 5 tokens, 3 per transaction
      const entries = [
        [alice.address, "5", "0"],
        [owner.address, "1", "0"],
      ];
      const tree = StandardMerkleTree.of(entries, LEAF_TYPES);
      await nft.connect(owner).setAllowlist(tree.root);
      const proof = tree.getProof(0);
      await expect(nft.connect(alice).allowlistMint(0n, 5n, 0n, proof))
        .to.be.revertedWithCustomError(nft, "InvalidMintAmount")
        .withArgs(0n, 3n);
      await expect(nft.connect(alice).allowlistMint(4n, 5n, 0n, proof))
        .to.be.revertedWithCustomError(nft, "InvalidMintAmount")
        .withArgs(4n, 3n);
      await nft.connect(owner).mintForFree(3n, owner.address);
      await expect(nft.connect(alice).allowlistMint(3n, 5n, 0n, proof))
        .to.be.revertedWithCustomError(nft, "MaxSupplyExceeded")
        .withArgs(3n, 2n);
      await nft.connect(owner).setPaused(true);
      await expect(nft.connect(alice).allowlistMint(1n, 5n, 0n, proof)).to.be.revertedWithCustomError(
        nft,
        "ContractPaused",
      );
    });
  });

  describe("vouchers", function () {
    it("setVoucherSigner emits VoucherSignerChanged(previous, signer) and is owner only", async function () {
      const { nft, owner, alice, bob } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).setVoucherSigner(bob.address))
        .to.emit(nft, "VoucherSignerChanged")
        .withArgs(ethers.ZeroAddress, bob.address);
      expect(await nft.voucherSigner()).to.equal(bob.address);
      await expect(nft.connect(alice).setVoucherSigner(alice.address))
        .to.be.revertedWithCustomError(nft, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
    });

    it("mints a signed voucher to its `to`, who pays amount × price, and emits VoucherRedeemed", async function () {
      const { nft, alice, voucher, signature } = await loadFixture(voucherFixture);
      const paid = voucher.amount * voucher.price;
      const tx = nft.connect(alice).mintWithVoucher(voucher, signature, { value: paid });
      await expect(tx)
        .to.emit(nft, "VoucherRedeemed")
        .withArgs(voucher.id, alice.address, voucher.amount, voucher.price);
      await expect(tx).to.changeEtherBalances([alice, nft], [-paid, paid]);
      expect(await nft.walletOfOwner(alice.address)).to.deep.equal([1n, 2n]);
      expect(await nft.voucherUsed(voucher.id)).to.equal(true);
    });

    it("refuses the same id twice with VoucherUsed(id)", async function () {
      const { nft, alice, voucher, signature } = await loadFixture(voucherFixture);
      const value = voucher.amount * voucher.price;
      await nft.connect(alice).mintWithVoucher(voucher, signature, { value });
      await expect(nft.connect(alice).mintWithVoucher(voucher, signature, { value }))
        .to.be.revertedWithCustomError(nft, "VoucherUsed")
        .withArgs(voucher.id);
    });

    it("refuses a voucher past validUntil with VoucherExpired(id, validUntil)", async function () {
      const { nft, alice, voucher, signature } = await loadFixture(voucherFixture);
      await time.increaseTo(voucher.validUntil + 1n);
      await expect(nft.connect(alice).mintWithVoucher(voucher, signature, { value: voucher.amount * voucher.price }))
        .to.be.revertedWithCustomError(nft, "VoucherExpired")
        .withArgs(voucher.id, voucher.validUntil);
    });

    it("refuses a caller other than `to` with VoucherNotForCaller(to, caller)", async function () {
      const { nft, alice, bob, voucher, signature } = await loadFixture(voucherFixture);
      await expect(nft.connect(bob).mintWithVoucher(voucher, signature, { value: voucher.amount * voucher.price }))
        .to.be.revertedWithCustomError(nft, "VoucherNotForCaller")
        .withArgs(alice.address, bob.address);
    });

    it("refuses a voucher signed by another key, or altered, with VoucherSignerMismatch(recovered, signer)", async function () {
      const { nft, alice, bob, carol, voucher } = await loadFixture(voucherFixture);
      const value = voucher.amount * voucher.price;
      const byBob = await signVoucher(nft, bob, voucher);
      await expect(nft.connect(alice).mintWithVoucher(voucher, byBob, { value }))
        .to.be.revertedWithCustomError(nft, "VoucherSignerMismatch")
        .withArgs(bob.address, carol.address);
      const cheaper = { ...voucher, price: 1n };
      await expect(
        nft.connect(alice).mintWithVoucher(cheaper, await signVoucher(nft, bob, cheaper), { value }),
      ).to.be.revertedWithCustomError(nft, "VoucherSignerMismatch");
      await expect(nft.connect(alice).mintWithVoucher(voucher, "0x1234", { value }))
        .to.be.revertedWithCustomError(nft, "VoucherSignerMismatch")
        .withArgs(ethers.ZeroAddress, carol.address);
    });

    it("refuses an underpaid or overpaid voucher with IncorrectPayment, and keeps the pause and maxMintAmountPerTx", async function () {
      const { nft, owner, alice, carol, voucher, signature } = await loadFixture(voucherFixture);
      const required = voucher.amount * voucher.price;
      await expect(nft.connect(alice).mintWithVoucher(voucher, signature, { value: 1n }))
        .to.be.revertedWithCustomError(nft, "IncorrectPayment")
        .withArgs(required, 1n);
      await expect(nft.connect(alice).mintWithVoucher(voucher, signature, { value: required + 1n }))
        .to.be.revertedWithCustomError(nft, "IncorrectPayment")
        .withArgs(required, required + 1n);
      const big = { ...voucher, amount: MAX_PER_TX + 1n, id: ethers.id("big") };
      await expect(nft.connect(alice).mintWithVoucher(big, await signVoucher(nft, carol, big)))
        .to.be.revertedWithCustomError(nft, "InvalidMintAmount")
        .withArgs(MAX_PER_TX + 1n, MAX_PER_TX);
      await nft.connect(owner).setPaused(true);
      await expect(
        nft.connect(alice).mintWithVoucher(voucher, signature, { value: voucher.amount * voucher.price }),
      ).to.be.revertedWithCustomError(nft, "ContractPaused");
    });
  });

  describe("royalties (ERC-2981)", function () {
    it("claims ERC-2981 (0x2a55205a) beside ERC-721", async function () {
      const { nft } = await loadFixture(collectionFixture);
      expect(await nft.supportsInterface("0x2a55205a")).to.equal(true);
      expect(await nft.supportsInterface("0x80ac58cd")).to.equal(true);
    });

    it("has no royalty until setDefaultRoyalty, which emits DefaultRoyaltyChanged(receiver, bps)", async function () {
      const { nft, owner, bob } = await loadFixture(collectionFixture);
      expect(await nft.royaltyInfo(1n, 10_000n)).to.deep.equal([ethers.ZeroAddress, 0n]);
      await expect(nft.connect(owner).setDefaultRoyalty(bob.address, 500n))
        .to.emit(nft, "DefaultRoyaltyChanged")
        .withArgs(bob.address, 500n);
      expect(await nft.royaltyInfo(7n, ethers.parseEther("2"))).to.deep.equal([bob.address, ethers.parseEther("0.1")]);
    });

    it("refuses more than 100% with ERC2981InvalidDefaultRoyalty, and a non-owner", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).setDefaultRoyalty(alice.address, 10_001n))
        .to.be.revertedWithCustomError(nft, "ERC2981InvalidDefaultRoyalty")
        .withArgs(10_001n, 10_000n);
      await expect(nft.connect(alice).setDefaultRoyalty(alice.address, 100n))
        .to.be.revertedWithCustomError(nft, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
    });
  });

  describe("NFTDropCollection: drop settings at deploy", function () {
    it("sets the royalty and the voucher signer given to the constructor, with their events", async function () {
      const [, alice, bob] = await ethers.getSigners();
      const factory = await ethers.getContractFactory("NFTDropCollection");
      const nft = await factory.deploy(
        NAME,
        SYMBOL,
        BASE_URI,
        COST,
        MAX_SUPPLY,
        MAX_PER_TX,
        alice.address,
        250n,
        bob.address,
        ethers.ZeroAddress,
      );
      const tx = nft.deploymentTransaction()!;
      await expect(tx).to.emit(nft, "DefaultRoyaltyChanged").withArgs(alice.address, 250n);
      await expect(tx).to.emit(nft, "VoucherSignerChanged").withArgs(ethers.ZeroAddress, bob.address);
      expect(await nft.royaltyInfo(1n, 10_000n)).to.deep.equal([alice.address, 250n]);
      expect(await nft.voucherSigner()).to.equal(bob.address);
    });

    it("sets none for zero addresses: no royalty, no voucher signer, prices in the native coin (no PaymentTokenChanged)", async function () {
      const factory = await ethers.getContractFactory("NFTDropCollection");
      const zero = ethers.ZeroAddress;
      const nft = await factory.deploy(NAME, SYMBOL, BASE_URI, COST, MAX_SUPPLY, MAX_PER_TX, zero, 0n, zero, zero);
      await expect(nft.deploymentTransaction()!).not.to.emit(nft, "PaymentTokenChanged");
      expect(await nft.royaltyInfo(1n, 10_000n)).to.deep.equal([zero, 0n]);
      expect(await nft.voucherSigner()).to.equal(zero);
      expect(await nft.paymentToken()).to.equal(zero);
      const [, alice] = await ethers.getSigners();
      await expect(nft.connect(alice).mint(1n, { value: COST })).to.changeEtherBalance(alice, -COST);
    });

    it("sets the payment token given to the constructor with PaymentTokenChanged(0, token); mint then pulls the token", async function () {
      const [owner, alice] = await ethers.getSigners();
      const tusd = await ethers.deployContract("TestUSD");
      const token = await tusd.getAddress();
      const factory = await ethers.getContractFactory("NFTDropCollection");
      const zero = ethers.ZeroAddress;
      const nft = await factory.deploy(NAME, SYMBOL, BASE_URI, COST, MAX_SUPPLY, MAX_PER_TX, zero, 0n, zero, token);
      await expect(nft.deploymentTransaction()!).to.emit(nft, "PaymentTokenChanged").withArgs(zero, token);
      expect(await nft.paymentToken()).to.equal(token);
      expect(await nft.owner()).to.equal(owner.address);
      await (await tusd.getFunction("mint")(alice.address, COST * 2n)).wait();
      await (await tusd.connect(alice).getFunction("approve")(await nft.getAddress(), COST * 2n)).wait();
      await expect(nft.connect(alice).mint(1n, { value: COST })).to.be.revertedWithCustomError(
        nft,
        "NativePaymentNotAccepted",
      );
      await expect(nft.connect(alice).mint(2n)).to.changeTokenBalances(tusd, [alice, nft], [-COST * 2n, COST * 2n]);
    });

    it("refuses a payment token without code with InvalidPaymentToken(token), as setPaymentToken does", async function () {
      const [, alice] = await ethers.getSigners();
      const factory = await ethers.getContractFactory("NFTDropCollection");
      const zero = ethers.ZeroAddress;
      await expect(factory.deploy(NAME, SYMBOL, BASE_URI, COST, MAX_SUPPLY, MAX_PER_TX, zero, 0n, zero, alice.address))
        .to.be.revertedWithCustomError(factory, "InvalidPaymentToken")
        .withArgs(alice.address);
    });
  });
});
