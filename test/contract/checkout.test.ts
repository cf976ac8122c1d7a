import { expect } from "chai";
import { ethers } from "hardhat";
import fc from "fast-check";
import { loadFixture, takeSnapshot, time } from "@nomicfoundation/hardhat-network-helpers";
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { COST, MAX_PER_TX, collectionFixture, deployCollection } from "./fixtures";
import { TOKEN_COST, USD, deployToken, signPermit, tokenCollectionFixture } from "./checkout-fixtures";

const HOUR = 3600n;

/** tokenCollectionFixture, and a permit by `buyer` of the price of 3 tokens to the collection, valid an hour. */
async function permitFixture() {
  const base = await tokenCollectionFixture();
  const price = TOKEN_COST * 3n;
  const deadline = BigInt(await time.latest()) + HOUR;
  const permit = await signPermit(base.tusd, base.buyer, await base.nft.getAddress(), price, deadline);
  return { ...base, price, deadline, permit };
}

describe("NFTCollection: payment token (checkout)", function () {
  describe("setPaymentToken / paymentToken", function () {
    it("is zero (the native coin) by default; the owner sets it with PaymentTokenChanged(previous, token)", async function () {
      const { nft, owner } = await loadFixture(collectionFixture);
      expect(await nft.paymentToken()).to.equal(ethers.ZeroAddress);
      const tusd = await deployToken("TestUSD");
      const address = await tusd.getAddress();
      await expect(nft.connect(owner).setPaymentToken(address))
        .to.emit(nft, "PaymentTokenChanged")
        .withArgs(ethers.ZeroAddress, address);
      expect(await nft.paymentToken()).to.equal(address);
      await expect(nft.connect(owner).setPaymentToken(address)).not.to.emit(nft, "PaymentTokenChanged");
      await expect(nft.connect(owner).setPaymentToken(ethers.ZeroAddress))
        .to.emit(nft, "PaymentTokenChanged")
        .withArgs(address, ethers.ZeroAddress);
    });

    it("is owner only: OwnableUnauthorizedAccount", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      const tusd = await deployToken("TestUSD");
      await expect(nft.connect(alice).setPaymentToken(await tusd.getAddress()))
        .to.be.revertedWithCustomError(nft, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
    });

    it("refuses an address without code with InvalidPaymentToken(token)", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await expect(nft.connect(owner).setPaymentToken(alice.address))
        .to.be.revertedWithCustomError(nft, "InvalidPaymentToken")
        .withArgs(alice.address);
    });

    it("back to zero, mint takes ether again", async function () {
      const { nft, owner, alice } = await loadFixture(tokenCollectionFixture);
      await nft.connect(owner).setPaymentToken(ethers.ZeroAddress);
      await expect(nft.connect(alice).mint(1, { value: TOKEN_COST })).to.changeEtherBalance(alice, -TOKEN_COST);
    });
  });

  describe("mint with a token price", function () {
    it("pulls exactly cost × amount from the caller and mints", async function () {
      const { nft, tusd, alice } = await loadFixture(tokenCollectionFixture);
      await tusd.connect(alice).approve(await nft.getAddress(), ethers.MaxUint256);
      const tx = nft.connect(alice).mint(5);
      await expect(tx).to.changeTokenBalances(tusd, [alice, nft], [-TOKEN_COST * 5n, TOKEN_COST * 5n]);
      await expect(tx).to.changeEtherBalances([alice, nft], [0n, 0n], { includeFee: false });
      expect(await nft.balanceOf(alice.address)).to.equal(5n);
    });

    it("refuses any ether with NativePaymentNotAccepted", async function () {
      const { nft, tusd, alice } = await loadFixture(tokenCollectionFixture);
      await tusd.connect(alice).approve(await nft.getAddress(), ethers.MaxUint256);
      await expect(nft.connect(alice).mint(1, { value: 1n })).to.be.revertedWithCustomError(
        nft,
        "NativePaymentNotAccepted",
      );
      await expect(nft.connect(alice).mint(1, { value: TOKEN_COST })).to.be.revertedWithCustomError(
        nft,
        "NativePaymentNotAccepted",
      );
    });

    it("reverts with the token's ERC20InsufficientAllowance when the allowance is one unit short", async function () {
      const { nft, tusd, alice } = await loadFixture(tokenCollectionFixture);
      const nftAddress = await nft.getAddress();
      await tusd.connect(alice).approve(nftAddress, TOKEN_COST * 2n - 1n);
      await expect(nft.connect(alice).mint(2))
        .to.be.revertedWithCustomError(tusd, "ERC20InsufficientAllowance")
        .withArgs(nftAddress, TOKEN_COST * 2n - 1n, TOKEN_COST * 2n);
      expect(await nft.totalSupply()).to.equal(0n);
    });

    it("reverts with the token's ERC20InsufficientBalance when the balance is too low", async function () {
      const { nft, tusd, carol } = await loadFixture(tokenCollectionFixture);
      await tusd.mint(carol.address, TOKEN_COST - 1n);
      await tusd.connect(carol).approve(await nft.getAddress(), ethers.MaxUint256);
      await expect(nft.connect(carol).mint(1))
        .to.be.revertedWithCustomError(tusd, "ERC20InsufficientBalance")
        .withArgs(carol.address, TOKEN_COST - 1n, TOKEN_COST);
    });

    it("goes through SafeERC20: a token whose transferFrom returns false reverts SafeERC20FailedOperation", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      const token = await ethers.getContractAt(
        "FalseReturningERC20",
        await (await deployToken("FalseReturningERC20")).getAddress(),
      );
      await token.mint(alice.address, 10n * COST);
      await token.connect(alice).approve(await nft.getAddress(), ethers.MaxUint256);
      await nft.connect(owner).setPaymentToken(await token.getAddress());
      await expect(nft.connect(alice).mint(1))
        .to.be.revertedWithCustomError(nft, "SafeERC20FailedOperation")
        .withArgs(await token.getAddress());
      await token.setFailing(false);
      await expect(nft.connect(alice).mint(1)).to.changeTokenBalance(token, alice, -COST);
    });

    it("works with a token without permit (plain ERC-20)", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      const token = await ethers.getContractAt("PlainERC20", await (await deployToken("PlainERC20")).getAddress());
      await token.mint(alice.address, 10n * COST);
      await token.connect(alice).approve(await nft.getAddress(), COST * 2n);
      await nft.connect(owner).setPaymentToken(await token.getAddress());
      await expect(nft.connect(alice).mint(2)).to.changeTokenBalance(token, alice, -COST * 2n);
    });

    it("is free at a cost of zero: no transfer, no allowance needed", async function () {
      const { nft, tusd, owner, carol } = await loadFixture(tokenCollectionFixture);
      await nft.connect(owner).setCost(0n);
      const tx = nft.connect(carol).mint(2);
      await expect(tx).not.to.emit(tusd, "Transfer");
      expect(await nft.balanceOf(carol.address)).to.equal(2n);
    });

    it("keeps the pause, the whitelist and the caps", async function () {
      const { nft, tusd, owner, alice } = await loadFixture(tokenCollectionFixture);
      await tusd.connect(alice).approve(await nft.getAddress(), ethers.MaxUint256);
      await expect(nft.connect(alice).mint(MAX_PER_TX + 1n)).to.be.revertedWithCustomError(nft, "InvalidMintAmount");
      await nft.connect(owner).setWhitelistOnly(true);
      await expect(nft.connect(alice).mint(1))
        .to.be.revertedWithCustomError(nft, "NotWhitelisted")
        .withArgs(alice.address);
      await nft.connect(owner).setPaused(true);
      await expect(nft.connect(alice).mint(1)).to.be.revertedWithCustomError(nft, "ContractPaused");
    });

    it("moves exactly cost × amount for any cost and amount (property)", async function () {
      const { nft, tusd, owner, alice } = await loadFixture(tokenCollectionFixture);
      await tusd.connect(alice).approve(await nft.getAddress(), ethers.MaxUint256);
      await tusd.mint(alice.address, 10n ** 30n);
      const snapshot = await takeSnapshot();
      await fc.assert(
        fc.asyncProperty(
          fc.bigInt({ min: 0n, max: 10n ** 28n }),
          fc.integer({ min: 1, max: Number(MAX_PER_TX) }),
          async (cost, amount) => {
            await snapshot.restore();
            await nft.connect(owner).setCost(cost);
            const before = await tusd.balanceOf(alice.address);
            await (await nft.connect(alice).mint(amount)).wait();
            expect(before - (await tusd.balanceOf(alice.address))).to.equal(cost * BigInt(amount));
            expect(await tusd.balanceOf(await nft.getAddress())).to.equal(cost * BigInt(amount));
          },
        ),
        { numRuns: 15 },
      );
    });
  });

  describe("native mint is unchanged", function () {
    it("takes ether, keeps an overpayment and refuses an underpayment with InsufficientPayment", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      await expect(nft.connect(alice).mint(2, { value: COST * 2n + 1n })).to.changeEtherBalance(nft, COST * 2n + 1n);
      await expect(nft.connect(alice).mint(1, { value: COST - 1n }))
        .to.be.revertedWithCustomError(nft, "InsufficientPayment")
        .withArgs(COST, COST - 1n);
    });

    it("mintWithPermit refuses a native price with NotTokenPriced", async function () {
      const { nft, alice } = await loadFixture(collectionFixture);
      await expect(
        nft.connect(alice).mintWithPermit(alice.address, 1, 0n, 27, ethers.ZeroHash, ethers.ZeroHash),
      ).to.be.revertedWithCustomError(nft, "NotTokenPriced");
    });
  });

  describe("mintWithPermit", function () {
    it("mints to a buyer holding 0 ETH, who ends with the tokens and 0 ETH; the sender pays only gas", async function () {
      const { nft, tusd, buyer, carol, price, deadline, permit } = await loadFixture(permitFixture);
      expect(await ethers.provider.getBalance(buyer.address)).to.equal(0n);
      const carolTusd = await tusd.balanceOf(carol.address);
      const carolEth = await ethers.provider.getBalance(carol.address);
      const tx = await nft.connect(carol).mintWithPermit(buyer.address, 3, deadline, permit.v, permit.r, permit.s);
      const receipt = (await tx.wait())!;
      expect(await nft.balanceOf(buyer.address)).to.equal(3n);
      expect(await nft.balanceOf(carol.address)).to.equal(0n);
      expect(await ethers.provider.getBalance(buyer.address)).to.equal(0n);
      expect(await tusd.balanceOf(buyer.address)).to.equal(1_000n * USD - price);
      expect(await tusd.balanceOf(await nft.getAddress())).to.equal(price);
      expect(await tusd.balanceOf(carol.address)).to.equal(carolTusd);
      expect(await ethers.provider.getBalance(carol.address)).to.equal(carolEth - receipt.fee);
      expect(await tusd.allowance(buyer.address, await nft.getAddress())).to.equal(0n);
    });

    it("still mints when someone else applied the permit first (front-run)", async function () {
      const { nft, tusd, buyer, bob, carol, price, deadline, permit } = await loadFixture(permitFixture);
      const nftAddress = await nft.getAddress();
      await tusd.connect(bob).permit(buyer.address, nftAddress, price, deadline, permit.v, permit.r, permit.s);
      await expect(
        nft.connect(carol).mintWithPermit(buyer.address, 3, deadline, permit.v, permit.r, permit.s),
      ).to.changeTokenBalances(tusd, [buyer, nft], [-price, price]);
      expect(await nft.balanceOf(buyer.address)).to.equal(3n);
    });

    it("refuses an expired deadline: the permit fails and PaymentTokenAllowanceTooLow(buyer, 0, price)", async function () {
      const { nft, buyer, carol, price, deadline, permit } = await loadFixture(permitFixture);
      await time.increaseTo(deadline + 1n);
      await expect(nft.connect(carol).mintWithPermit(buyer.address, 3, deadline, permit.v, permit.r, permit.s))
        .to.be.revertedWithCustomError(nft, "PaymentTokenAllowanceTooLow")
        .withArgs(buyer.address, 0n, price);
    });

    it("refuses a permit signed by another key", async function () {
      const { nft, tusd, buyer, alice, carol, price, deadline } = await loadFixture(permitFixture);
      const forged = await signPermit(tusd, alice, await nft.getAddress(), price, deadline, 0n);
      await expect(nft.connect(carol).mintWithPermit(buyer.address, 3, deadline, forged.v, forged.r, forged.s))
        .to.be.revertedWithCustomError(nft, "PaymentTokenAllowanceTooLow")
        .withArgs(buyer.address, 0n, price);
    });

    it("refuses a permit for another amount than the price (the signed value must be exactly cost × amount)", async function () {
      const { nft, buyer, carol, price, deadline, permit } = await loadFixture(permitFixture);
      await expect(nft.connect(carol).mintWithPermit(buyer.address, 2, deadline, permit.v, permit.r, permit.s))
        .to.be.revertedWithCustomError(nft, "PaymentTokenAllowanceTooLow")
        .withArgs(buyer.address, 0n, (price * 2n) / 3n);
    });

    it("refuses a reused permit: its nonce moved and its allowance is spent", async function () {
      const { nft, buyer, carol, price, deadline, permit } = await loadFixture(permitFixture);
      await nft.connect(carol).mintWithPermit(buyer.address, 3, deadline, permit.v, permit.r, permit.s);
      await expect(nft.connect(carol).mintWithPermit(buyer.address, 3, deadline, permit.v, permit.r, permit.s))
        .to.be.revertedWithCustomError(nft, "PaymentTokenAllowanceTooLow")
        .withArgs(buyer.address, 0n, price);
      expect(await nft.balanceOf(buyer.address)).to.equal(3n);
    });

    it("never spends a standing allowance with a signature the buyer did not make: PermitNotApplied", async function () {
      const { nft, tusd, alice, bob, carol, price, deadline } = await loadFixture(permitFixture);
      // alice approved the collection for her own mints; bob sends a permit mint for her with his own signature.
      await tusd.connect(alice).approve(await nft.getAddress(), ethers.MaxUint256);
      const forged = await signPermit(tusd, bob, await nft.getAddress(), price, deadline, 0n);
      await expect(nft.connect(carol).mintWithPermit(alice.address, 3, deadline, forged.v, forged.r, forged.s))
        .to.be.revertedWithCustomError(nft, "PermitNotApplied")
        .withArgs(alice.address);
      // An allowance of exactly the price (an approve for her own mint), with bob's signature: refused too.
      await tusd.connect(alice).approve(await nft.getAddress(), price);
      await expect(
        nft.connect(carol).mintWithPermit(alice.address, 3, deadline, forged.v, forged.r, forged.s),
      ).to.be.revertedWithCustomError(nft, "PermitNotApplied");
    });

    it("never replays a spent permit of the buyer's on a standing allowance: PermitNotApplied", async function () {
      const { nft, tusd, alice, carol, price, deadline } = await loadFixture(permitFixture);
      const own = await signPermit(tusd, alice, await nft.getAddress(), price, deadline);
      await nft.connect(carol).mintWithPermit(alice.address, 3, deadline, own.v, own.r, own.s);
      await tusd.connect(alice).approve(await nft.getAddress(), ethers.MaxUint256);
      await expect(nft.connect(carol).mintWithPermit(alice.address, 3, deadline, own.v, own.r, own.s))
        .to.be.revertedWithCustomError(nft, "PermitNotApplied")
        .withArgs(alice.address);
      expect(await nft.balanceOf(alice.address)).to.equal(3n);
    });

    it("refuses a token without permit: PaymentTokenAllowanceTooLow, or PermitNotApplied with an allowance", async function () {
      const { nft, owner, alice, carol } = await loadFixture(collectionFixture);
      const token = await ethers.getContractAt("PlainERC20", await (await deployToken("PlainERC20")).getAddress());
      await nft.connect(owner).setPaymentToken(await token.getAddress());
      await token.mint(alice.address, 10n * COST);
      const deadline = BigInt(await time.latest()) + HOUR;
      await expect(nft.connect(carol).mintWithPermit(alice.address, 1, deadline, 27, ethers.ZeroHash, ethers.ZeroHash))
        .to.be.revertedWithCustomError(nft, "PaymentTokenAllowanceTooLow")
        .withArgs(alice.address, 0n, COST);
      await token.connect(alice).approve(await nft.getAddress(), COST);
      await expect(
        nft.connect(carol).mintWithPermit(alice.address, 1, deadline, 27, ethers.ZeroHash, ethers.ZeroHash),
      ).to.be.revertedWithCustomError(nft, "PermitNotApplied");
    });

    it("keeps the whitelist (of the buyer), the pause, maxMintAmountPerTx and maxSupply", async function () {
      const { nft, tusd, owner, buyer, carol, deadline, permit } = await loadFixture(permitFixture);
      const send = (amount: bigint, p = permit) =>
        nft.connect(carol).mintWithPermit(buyer.address, amount, deadline, p.v, p.r, p.s);
      await nft.connect(owner).setWhitelistOnly(true);
      await nft.connect(owner).addUserAddressToWhitelist(carol.address);
      await expect(send(3n)).to.be.revertedWithCustomError(nft, "NotWhitelisted").withArgs(buyer.address);
      await nft.connect(owner).setWhitelistOnly(false);
      await nft.connect(owner).setPaused(true);
      await expect(send(3n)).to.be.revertedWithCustomError(nft, "ContractPaused");
      await nft.connect(owner).setPaused(false);
      await expect(send(MAX_PER_TX + 1n))
        .to.be.revertedWithCustomError(nft, "InvalidMintAmount")
        .withArgs(MAX_PER_TX + 1n, MAX_PER_TX);
      await expect(send(0n)).to.be.revertedWithCustomError(nft, "InvalidMintAmount");

      const small = await deployCollection({ cost: TOKEN_COST, maxSupply: 2n, maxPerTx: 3n });
      await small.connect(owner).setPaymentToken(await tusd.getAddress());
      const p = await signPermit(tusd, buyer, await small.getAddress(), TOKEN_COST * 3n, deadline);
      await expect(small.connect(carol).mintWithPermit(buyer.address, 3, deadline, p.v, p.r, p.s))
        .to.be.revertedWithCustomError(small, "MaxSupplyExceeded")
        .withArgs(3n, 2n);
    });
  });

  describe("allowlist and voucher mints with a token price", function () {
    it("allowlistMint pulls price × amount of the token and refuses ether", async function () {
      const { nft, tusd, owner, alice } = await loadFixture(tokenCollectionFixture);
      const entries = [
        [alice.address, "3", TOKEN_COST.toString()],
        [owner.address, "1", "0"],
      ];
      const tree = StandardMerkleTree.of(entries, ["address", "uint256", "uint256"]);
      await nft.connect(owner).setAllowlist(tree.root);
      const proof = tree.getProof(0);
      await tusd.connect(alice).approve(await nft.getAddress(), ethers.MaxUint256);
      await expect(
        nft.connect(alice).allowlistMint(2, 3, TOKEN_COST, proof, { value: TOKEN_COST * 2n }),
      ).to.be.revertedWithCustomError(nft, "NativePaymentNotAccepted");
      await expect(nft.connect(alice).allowlistMint(2, 3, TOKEN_COST, proof)).to.changeTokenBalances(
        tusd,
        [alice, nft],
        [-TOKEN_COST * 2n, TOKEN_COST * 2n],
      );
      expect(await nft.allowlistMinted(alice.address)).to.equal(2n);
    });

    it("mintWithVoucher pulls price × amount of the token and refuses ether", async function () {
      const { nft, tusd, owner, alice, carol } = await loadFixture(tokenCollectionFixture);
      await nft.connect(owner).setVoucherSigner(carol.address);
      const voucher = {
        to: alice.address,
        amount: 2n,
        price: 3n * USD,
        validUntil: BigInt(await time.latest()) + HOUR,
        id: ethers.id("token-voucher"),
      };
      const { chainId } = await ethers.provider.getNetwork();
      const domain = { name: await nft.name(), version: "1", chainId, verifyingContract: await nft.getAddress() };
      const types = {
        Voucher: [
          { name: "to", type: "address" },
          { name: "amount", type: "uint256" },
          { name: "price", type: "uint256" },
          { name: "validUntil", type: "uint64" },
          { name: "id", type: "bytes32" },
        ],
      };
      const signature = await carol.signTypedData(domain, types, voucher);
      await tusd.connect(alice).approve(await nft.getAddress(), ethers.MaxUint256);
      await expect(
        nft.connect(alice).mintWithVoucher(voucher, signature, { value: 6n * USD }),
      ).to.be.revertedWithCustomError(nft, "NativePaymentNotAccepted");
      await expect(nft.connect(alice).mintWithVoucher(voucher, signature)).to.changeTokenBalances(
        tusd,
        [alice, nft],
        [-6n * USD, 6n * USD],
      );
    });
  });

  describe("withdraw", function () {
    it("sends the token balance and the ether to the owner, with PaymentTokenWithdrawn and Withdrawn", async function () {
      const { nft, owner, alice } = await loadFixture(collectionFixture);
      await nft.connect(alice).mint(2, { value: COST * 2n });
      const token = await ethers.getContractAt("TestUSD", await (await deployToken("TestUSD")).getAddress());
      await nft.connect(owner).setPaymentToken(await token.getAddress());
      await nft.connect(owner).setCost(TOKEN_COST);
      await token.mint(alice.address, 100n * USD);
      await token.connect(alice).approve(await nft.getAddress(), ethers.MaxUint256);
      await nft.connect(alice).mint(3);
      const tx = nft.connect(owner).withdraw();
      await expect(tx)
        .to.emit(nft, "PaymentTokenWithdrawn")
        .withArgs(owner.address, await token.getAddress(), TOKEN_COST * 3n);
      await expect(tx)
        .to.emit(nft, "Withdrawn")
        .withArgs(owner.address, COST * 2n);
      await expect(tx).to.changeTokenBalances(token, [nft, owner], [-TOKEN_COST * 3n, TOKEN_COST * 3n]);
      await expect(tx).to.changeEtherBalance(nft, -COST * 2n);
    });

    it("sends only the token when it holds no ether (no Withdrawn); NothingToWithdraw when both are empty", async function () {
      const { nft, tusd, owner, alice } = await loadFixture(tokenCollectionFixture);
      await expect(nft.connect(owner).withdraw()).to.be.revertedWithCustomError(nft, "NothingToWithdraw");
      await tusd.connect(alice).approve(await nft.getAddress(), ethers.MaxUint256);
      await nft.connect(alice).mint(1);
      const tx = nft.connect(owner).withdraw();
      await expect(tx).to.changeTokenBalance(tusd, owner, TOKEN_COST);
      await expect(tx).not.to.emit(nft, "Withdrawn");
      await expect(nft.connect(owner).withdraw()).to.be.revertedWithCustomError(nft, "NothingToWithdraw");
    });

    it("is owner only", async function () {
      const { nft, alice } = await loadFixture(tokenCollectionFixture);
      await expect(nft.connect(alice).withdraw()).to.be.revertedWithCustomError(nft, "OwnableUnauthorizedAccount");
    });
  });
});
