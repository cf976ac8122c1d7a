import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { CAPPED, COST, OPEN, deployEditions, editionsFixture } from "./fixtures";
import { TOKEN_COST, USD, deployToken, signPermit, tokenEditionsFixture, tusdOf } from "./checkout-fixtures";

const HOUR = 3600n;

/** tokenEditionsFixture, and a permit by `buyer` of the price of 2 tokens of OPEN (2 × 2 × TOKEN_COST), valid an hour. */
async function permitFixture() {
  const base = await tokenEditionsFixture();
  const price = TOKEN_COST * 2n * 2n;
  const deadline = BigInt(await time.latest()) + HOUR;
  const permit = await signPermit(base.tusd, base.buyer, await base.editions.getAddress(), price, deadline);
  return { ...base, price, deadline, permit };
}

describe("NFTEditions: payment token (checkout)", function () {
  describe("setPaymentToken / paymentToken", function () {
    it("is zero by default; owner only; emits PaymentTokenChanged(previous, token); refuses an address without code", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      expect(await editions.paymentToken()).to.equal(ethers.ZeroAddress);
      const address = await (await deployToken("TestUSD")).getAddress();
      await expect(editions.connect(alice).setPaymentToken(address))
        .to.be.revertedWithCustomError(editions, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
      await expect(editions.connect(owner).setPaymentToken(alice.address))
        .to.be.revertedWithCustomError(editions, "InvalidPaymentToken")
        .withArgs(alice.address);
      await expect(editions.connect(owner).setPaymentToken(address))
        .to.emit(editions, "PaymentTokenChanged")
        .withArgs(ethers.ZeroAddress, address);
      expect(await editions.paymentToken()).to.equal(address);
      // The token shares a slot with the switches and the edition count: none of them moved.
      expect(await editions.editionCount()).to.equal(2n);
      expect(await editions.paused()).to.equal(false);
      expect(await editions.whitelistOnly()).to.equal(false);
      await editions.connect(owner).setPaused(true);
      expect(await editions.paymentToken()).to.equal(address);
    });
  });

  describe("the constructor's paymentToken", function () {
    it("sets it with PaymentTokenChanged(0, token); the zero address is the native coin, with no event", async function () {
      const address = await (await deployToken("TestUSD")).getAddress();
      const priced = await deployEditions(ethers.ZeroAddress, 0n, address);
      await expect(priced.deploymentTransaction()!)
        .to.emit(priced, "PaymentTokenChanged")
        .withArgs(ethers.ZeroAddress, address);
      expect(await priced.paymentToken()).to.equal(address);
      const native = await deployEditions(ethers.ZeroAddress, 0n, ethers.ZeroAddress);
      await expect(native.deploymentTransaction()!).not.to.emit(native, "PaymentTokenChanged");
      expect(await native.paymentToken()).to.equal(ethers.ZeroAddress);
    });

    it("mints with the token from the start: an edition's cost is pulled in the token, ether refused", async function () {
      const [owner, alice] = await ethers.getSigners();
      const tusd = await tusdOf(await (await deployToken("TestUSD")).getAddress());
      const editions = await deployEditions(ethers.ZeroAddress, 0n, await tusd.getAddress());
      await (await editions.connect(owner).createEdition(TOKEN_COST, 10n, 5n)).wait();
      await (await tusd.mint(alice.address, 100n * USD)).wait();
      await (await tusd.connect(alice).approve(await editions.getAddress(), ethers.MaxUint256)).wait();
      await expect(editions.connect(alice).mint(1n, 1n, { value: TOKEN_COST })).to.be.revertedWithCustomError(
        editions,
        "NativePaymentNotAccepted",
      );
      await expect(editions.connect(alice).mint(1n, 2n)).to.changeTokenBalances(
        tusd,
        [alice, editions],
        [-TOKEN_COST * 2n, TOKEN_COST * 2n],
      );
    });

    it("refuses an address without code with InvalidPaymentToken(token)", async function () {
      const [, alice] = await ethers.getSigners();
      const factory = await ethers.getContractFactory("NFTEditions");
      await expect(factory.deploy("E", "E", "ipfs://x/", ethers.ZeroAddress, 0n, alice.address))
        .to.be.revertedWithCustomError(factory, "InvalidPaymentToken")
        .withArgs(alice.address);
    });
  });

  describe("mint with a token price", function () {
    it("pulls exactly cost(id) × amount of the token from the caller", async function () {
      const { editions, tusd, alice } = await loadFixture(tokenEditionsFixture);
      await tusd.connect(alice).approve(await editions.getAddress(), ethers.MaxUint256);
      await expect(editions.connect(alice).mint(OPEN.id, 5)).to.changeTokenBalances(
        tusd,
        [alice, editions],
        [-TOKEN_COST * 10n, TOKEN_COST * 10n],
      );
      expect(await editions.balanceOf(alice.address, OPEN.id)).to.equal(5n);
    });

    it("refuses ether with NativePaymentNotAccepted; a low allowance or balance reverts in the token", async function () {
      const { editions, tusd, alice, carol } = await loadFixture(tokenEditionsFixture);
      const address = await editions.getAddress();
      await tusd.connect(alice).approve(address, TOKEN_COST - 1n);
      await expect(editions.connect(alice).mint(CAPPED.id, 1, { value: 1n })).to.be.revertedWithCustomError(
        editions,
        "NativePaymentNotAccepted",
      );
      await expect(editions.connect(alice).mint(CAPPED.id, 1))
        .to.be.revertedWithCustomError(tusd, "ERC20InsufficientAllowance")
        .withArgs(address, TOKEN_COST - 1n, TOKEN_COST);
      await tusd.connect(carol).approve(address, ethers.MaxUint256);
      await expect(editions.connect(carol).mint(CAPPED.id, 1))
        .to.be.revertedWithCustomError(tusd, "ERC20InsufficientBalance")
        .withArgs(carol.address, 0n, TOKEN_COST);
    });

    it("goes through SafeERC20: a false-returning token reverts SafeERC20FailedOperation", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      const token = await ethers.getContractAt(
        "FalseReturningERC20",
        await (await deployToken("FalseReturningERC20")).getAddress(),
      );
      await token.mint(alice.address, 10n * COST);
      await token.connect(alice).approve(await editions.getAddress(), ethers.MaxUint256);
      await editions.connect(owner).setPaymentToken(await token.getAddress());
      await expect(editions.connect(alice).mint(CAPPED.id, 1))
        .to.be.revertedWithCustomError(editions, "SafeERC20FailedOperation")
        .withArgs(await token.getAddress());
    });

    it("native mint is unchanged without a token; mintWithPermit refuses it with NotTokenPriced", async function () {
      const { editions, alice } = await loadFixture(editionsFixture);
      await expect(editions.connect(alice).mint(CAPPED.id, 2, { value: COST * 2n })).to.changeEtherBalance(
        editions,
        COST * 2n,
      );
      await expect(editions.connect(alice).mint(CAPPED.id, 1, { value: COST - 1n }))
        .to.be.revertedWithCustomError(editions, "InsufficientPayment")
        .withArgs(COST, COST - 1n);
      await expect(
        editions.connect(alice).mintWithPermit(alice.address, 1, CAPPED.id, 0n, 27, ethers.ZeroHash, ethers.ZeroHash),
      ).to.be.revertedWithCustomError(editions, "NotTokenPriced");
    });
  });

  describe("mintWithPermit", function () {
    it("mints to a buyer holding 0 ETH, who ends with the tokens and 0 ETH; the sender pays only gas", async function () {
      const { editions, tusd, buyer, carol, price, deadline, permit } = await loadFixture(permitFixture);
      const carolEth = await ethers.provider.getBalance(carol.address);
      const tx = await editions
        .connect(carol)
        .mintWithPermit(buyer.address, 2, OPEN.id, deadline, permit.v, permit.r, permit.s);
      const receipt = (await tx.wait())!;
      expect(await editions.balanceOf(buyer.address, OPEN.id)).to.equal(2n);
      expect(await ethers.provider.getBalance(buyer.address)).to.equal(0n);
      expect(await tusd.balanceOf(buyer.address)).to.equal(1_000n * USD - price);
      expect(await tusd.balanceOf(await editions.getAddress())).to.equal(price);
      expect(await ethers.provider.getBalance(carol.address)).to.equal(carolEth - receipt.fee);
    });

    it("still mints when someone else applied the permit first (front-run)", async function () {
      const { editions, tusd, buyer, bob, carol, price, deadline, permit } = await loadFixture(permitFixture);
      const address = await editions.getAddress();
      await tusd.connect(bob).permit(buyer.address, address, price, deadline, permit.v, permit.r, permit.s);
      await expect(
        editions.connect(carol).mintWithPermit(buyer.address, 2, OPEN.id, deadline, permit.v, permit.r, permit.s),
      ).to.changeTokenBalances(tusd, [buyer, editions], [-price, price]);
    });

    it("refuses an expired deadline, another key's signature, another id's price and a reused permit", async function () {
      const { editions, tusd, buyer, alice, carol, price, deadline, permit } = await loadFixture(permitFixture);
      const send = (id: bigint, p = permit) =>
        editions.connect(carol).mintWithPermit(buyer.address, 2, id, deadline, p.v, p.r, p.s);
      const forged = await signPermit(tusd, alice, await editions.getAddress(), price, deadline, 0n);
      await expect(send(OPEN.id, forged))
        .to.be.revertedWithCustomError(editions, "PaymentTokenAllowanceTooLow")
        .withArgs(buyer.address, 0n, price);
      // CAPPED costs half as much: the permit's value is not the price, so it does not apply.
      await expect(send(CAPPED.id))
        .to.be.revertedWithCustomError(editions, "PaymentTokenAllowanceTooLow")
        .withArgs(buyer.address, 0n, price / 2n);
      await send(OPEN.id);
      await expect(send(OPEN.id))
        .to.be.revertedWithCustomError(editions, "PaymentTokenAllowanceTooLow")
        .withArgs(buyer.address, 0n, price);
      const later = await signPermit(tusd, buyer, await editions.getAddress(), price, deadline);
      await time.increaseTo(deadline + 1n);
      await expect(send(OPEN.id, later))
        .to.be.revertedWithCustomError(editions, "PaymentTokenAllowanceTooLow")
        .withArgs(buyer.address, 0n, price);
    });

    it("refuses to spend a standing allowance without the buyer's permit: PermitNotApplied", async function () {
      const { editions, tusd, alice, bob, carol, price, deadline } = await loadFixture(permitFixture);
      await tusd.connect(alice).approve(await editions.getAddress(), ethers.MaxUint256);
      const forged = await signPermit(tusd, bob, await editions.getAddress(), price, deadline, 0n);
      await expect(
        editions.connect(carol).mintWithPermit(alice.address, 2, OPEN.id, deadline, forged.v, forged.r, forged.s),
      )
        .to.be.revertedWithCustomError(editions, "PermitNotApplied")
        .withArgs(alice.address);
    });

    it("refuses a token without permit", async function () {
      const { editions, owner, alice, carol } = await loadFixture(editionsFixture);
      const token = await ethers.getContractAt("PlainERC20", await (await deployToken("PlainERC20")).getAddress());
      await editions.connect(owner).setPaymentToken(await token.getAddress());
      await token.mint(alice.address, 10n * COST);
      const deadline = BigInt(await time.latest()) + HOUR;
      await expect(
        editions
          .connect(carol)
          .mintWithPermit(alice.address, 1, CAPPED.id, deadline, 27, ethers.ZeroHash, ethers.ZeroHash),
      )
        .to.be.revertedWithCustomError(editions, "PaymentTokenAllowanceTooLow")
        .withArgs(alice.address, 0n, COST);
    });

    it("keeps the whitelist (of the buyer), both pauses, the edition's caps and a missing edition", async function () {
      const { editions, tusd, owner, buyer, carol, deadline } = await loadFixture(permitFixture);
      const address = await editions.getAddress();
      const send = async (id: bigint, amount: bigint) => {
        const price = id === CAPPED.id ? TOKEN_COST * amount : TOKEN_COST * 2n * amount;
        const p = await signPermit(tusd, buyer, address, price, deadline);
        return editions.connect(carol).mintWithPermit(buyer.address, amount, id, deadline, p.v, p.r, p.s);
      };
      await editions.connect(owner).setWhitelistOnly(true);
      await editions.connect(owner).addUserAddressToWhitelist(carol.address);
      await expect(send(OPEN.id, 1n)).to.be.revertedWithCustomError(editions, "NotWhitelisted").withArgs(buyer.address);
      await editions.connect(owner).setWhitelistOnly(false);
      await editions.connect(owner).setPaused(true);
      await expect(send(OPEN.id, 1n)).to.be.revertedWithCustomError(editions, "ContractPaused");
      await editions.connect(owner).setPaused(false);
      await editions.connect(owner).setEditionPaused(OPEN.id, true);
      await expect(send(OPEN.id, 1n)).to.be.revertedWithCustomError(editions, "EditionPaused").withArgs(OPEN.id);
      await expect(send(CAPPED.id, CAPPED.maxPerTx + 1n))
        .to.be.revertedWithCustomError(editions, "InvalidMintAmount")
        .withArgs(CAPPED.maxPerTx + 1n, CAPPED.maxPerTx);
      await (await send(CAPPED.id, 3n)).wait();
      await expect(send(CAPPED.id, 3n)).to.be.revertedWithCustomError(editions, "MaxSupplyExceeded").withArgs(3n, 2n);
      await expect(send(3n, 1n)).to.be.revertedWithCustomError(editions, "NonexistentToken").withArgs(3n);
    });
  });

  describe("withdraw", function () {
    it("sends the token balance and the ether to the owner; only the token when it holds no ether", async function () {
      const { editions, owner, alice } = await loadFixture(editionsFixture);
      await editions.connect(alice).mint(OPEN.id, 1, { value: OPEN.cost });
      const token = await ethers.getContractAt("TestUSD", await (await deployToken("TestUSD")).getAddress());
      await editions.connect(owner).setPaymentToken(await token.getAddress());
      // The price stays OPEN.cost, now in token units.
      await token.mint(alice.address, OPEN.cost * 3n);
      await token.connect(alice).approve(await editions.getAddress(), ethers.MaxUint256);
      await editions.connect(alice).mint(OPEN.id, 2);
      const tx = editions.connect(owner).withdraw();
      await expect(tx)
        .to.emit(editions, "PaymentTokenWithdrawn")
        .withArgs(owner.address, await token.getAddress(), OPEN.cost * 2n);
      await expect(tx).to.emit(editions, "Withdrawn").withArgs(owner.address, OPEN.cost);
      await expect(tx).to.changeTokenBalance(token, owner, OPEN.cost * 2n);
      await expect(editions.connect(owner).withdraw()).to.be.revertedWithCustomError(editions, "NothingToWithdraw");
      await editions.connect(alice).mint(OPEN.id, 1);
      const second = editions.connect(owner).withdraw();
      await expect(second).to.changeTokenBalance(token, owner, OPEN.cost);
      await expect(second).not.to.emit(editions, "Withdrawn");
    });
  });
});
