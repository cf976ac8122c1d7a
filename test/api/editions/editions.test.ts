/**
 * ERC-1155 editions through the API (API.md, "Editions: ERC-1155 collections"): an NFTEditions
 * contract deployed by POST /nft/deploy, editions made by POST /nft/createEdition, and the seed's
 * routes acting on them, against the shared node and service. Each test makes its own edition.
 */
import { expect } from "chai";
import { Contract, Wallet, getAddress, parseEther } from "ethers";
import { editionsInterface } from "../../../server/chain/editions";
import { expectConfirmedWrite, expectError, expectNoGasSpent } from "../expectations";
import { TEST_API_KEY, deployBytecode, deployDirectly, type ApiResponse } from "../harness";
import { describeSecrets, nftFixture } from "../nft/fixture";

/** Init code of a contract whose every call reverts without data: it refuses ERC-1155 tokens. */
const ALWAYS_REVERTS = "0x6005600c60003960056000f360006000fd";
const BASE_URI = "https://example.test/editions/";
const ERC1155_INTERFACE_ID = "0xd9b67a26";

describe("ERC-1155 editions through the API", function () {
  const f = nftFixture({ collection: false });
  let editions: string;
  let onChain: Contract;
  let minter: Wallet;
  let erc721: string;

  const post = (route: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
    f.api.post(route, { privateKey: f.owner.privateKey, contractAddress: editions, ...body }, headers);

  /** A new edition of the file's contract, by its owner; answers its token id. */
  async function createEdition(fields: Record<string, unknown> = {}): Promise<bigint> {
    const res = await post("/nft/createEdition", { cost: "1000", maxSupply: 100, maxMintAmountPerTx: 10, ...fields });
    expect(res.status, res.text).to.equal(200);
    return BigInt(res.body.tokenId);
  }

  const mint = (tokenId: unknown, mintAmount: unknown, key = minter.privateKey, headers?: Record<string, string>) =>
    post("/nft/mint", { privateKey: key, tokenId, mintAmount }, headers);

  before(async function () {
    this.timeout(120_000);
    minter = await f.fundedWallet();
    const res = await f.api.post("/nft/deploy", {
      privateKey: f.owner.privateKey,
      standard: "erc1155",
      name: "Prints",
      symbol: "PRT",
      baseURI: BASE_URI,
      royaltyReceiver: f.owner.address,
      royaltyBps: 500,
    });
    await expectConfirmedWrite(res, f.provider, {
      status: 201,
      from: f.owner.address,
      contractAddress: res.body.contractAddress ?? "0x0000000000000000000000000000000000000000",
      extra: ["owner", "standard"],
    });
    expect(res.body.standard).to.equal("erc1155");
    editions = res.body.contractAddress;
    onChain = new Contract(editions, editionsInterface(), f.provider);
    erc721 = await deployDirectly(f.owner.connect(f.provider), {});
  });

  describe("POST /nft/deploy with standard erc1155", function () {
    it("deploys an NFTEditions owned by the caller with the name, symbol and royalty asked for", async function () {
      expect(await onChain.supportsInterface(ERC1155_INTERFACE_ID)).to.equal(true);
      expect(await onChain.owner()).to.equal(f.owner.address);
      expect(await onChain.name()).to.equal("Prints");
      expect(await onChain.symbol()).to.equal("PRT");
      const [receiver, royalty] = await onChain.royaltyInfo(1, 10_000);
      expect([receiver, royalty]).to.deep.equal([f.owner.address, 500n]);
    });

    it("with an ERC-721 setting (cost, voucherSigner) answers 400 VALIDATION_ERROR naming it, and deploys nothing", async function () {
      const res = await expectNoGasSpent(f.provider, f.owner.address, () =>
        f.api.post("/nft/deploy", {
          privateKey: f.owner.privateKey,
          standard: "erc1155",
          cost: 5,
          voucherSigner: f.owner.address,
        }),
      );
      const error = expectError(res, 400, "VALIDATION_ERROR");
      expect(error.message).to.include("cost").and.include("voucherSigner").and.include("erc1155");
    });

    it('with standard "erc20" answers 400 VALIDATION_ERROR naming standard', async function () {
      const res = await f.api.post("/nft/deploy", { privateKey: f.owner.privateKey, standard: "erc20" });
      expect(expectError(res, 400, "VALIDATION_ERROR").message).to.include("standard");
    });
  });

  describe("POST /nft/createEdition", function () {
    it("answers the write fields and the new tokenId, from 1 in order, with the settings on chain", async function () {
      const count = (await onChain.editionCount()) as bigint;
      const res = await post("/nft/createEdition", { cost: "7", maxSupply: "0", maxMintAmountPerTx: 3 });
      await expectConfirmedWrite(res, f.provider, {
        from: f.owner.address,
        contractAddress: editions,
        extra: ["tokenId"],
      });
      expect(res.body.tokenId).to.equal(String(count + 1n));
      const [cost, maxSupply, maxPerTx, paused, supply] = await onChain.edition(res.body.tokenId);
      expect([cost, maxSupply, maxPerTx, paused, supply]).to.deep.equal([7n, 0n, 3n, false, 0n]);
      expect(await createEdition()).to.equal(count + 2n);
    });

    it("on an ERC-721 collection answers 400 VALIDATION_ERROR naming the standard, and sends nothing", async function () {
      const res = await expectNoGasSpent(f.provider, f.owner.address, () =>
        post("/nft/createEdition", { contractAddress: erc721, cost: 1, maxSupply: 1, maxMintAmountPerTx: 1 }),
      );
      expect(expectError(res, 400, "VALIDATION_ERROR").message)
        .to.include("ERC-1155")
        .and.include("ERC-721");
    });

    it("by another key than the owner answers 403 NOT_CONTRACT_OWNER and sends nothing", async function () {
      const res = await expectNoGasSpent(f.provider, minter.address, () =>
        post("/nft/createEdition", { privateKey: minter.privateKey, cost: 1, maxSupply: 1, maxMintAmountPerTx: 1 }),
      );
      expectError(res, 403, "NOT_CONTRACT_OWNER");
    });

    it("with a maxSupply past 2^64 - 1 answers 400 VALIDATION_ERROR (the contract's InvalidEdition) and sends nothing", async function () {
      const res = await expectNoGasSpent(f.provider, f.owner.address, () =>
        post("/nft/createEdition", { cost: 1, maxSupply: (2n ** 64n).toString(), maxMintAmountPerTx: 1 }),
      );
      const error = expectError(res, 400, "VALIDATION_ERROR");
      expect(error.message).to.include(
        "An edition needs maxMintAmountPerTx from 1 to 4294967295 and maxSupply at most",
      );
      expect(error.details[0]).to.deep.include({ path: "revert" });
      expect(error.details[0].message).to.match(/^InvalidEdition\(/);
    });
  });

  describe("POST /nft/mint on an edition", function () {
    it("pays cost × amount, answers tokenId, amount and value, and the caller holds the amount", async function () {
      const tokenId = await createEdition({ cost: parseEther("0.01").toString() });
      const contractBefore = await f.provider.getBalance(editions);
      const res = await mint(tokenId.toString(), 3);
      await expectConfirmedWrite(res, f.provider, {
        from: minter.address,
        contractAddress: editions,
        extra: ["tokenId", "amount", "value"],
      });
      expect(res.body).to.include({ tokenId: tokenId.toString(), amount: "3", value: parseEther("0.03").toString() });
      expect(await onChain.balanceOf(minter.address, tokenId)).to.equal(3n);
      expect(await onChain["totalSupply(uint256)"](tokenId)).to.equal(3n);
      expect(await f.provider.getBalance(editions)).to.equal(contractBefore + parseEther("0.03"));
    });

    it("without tokenId answers 400 VALIDATION_ERROR naming tokenId, and sends nothing", async function () {
      const res = await expectNoGasSpent(f.provider, minter.address, () =>
        post("/nft/mint", { privateKey: minter.privateKey, mintAmount: 1 }),
      );
      const error = expectError(res, 400, "VALIDATION_ERROR");
      expect(error.message).to.include("tokenId");
      expect(error.details.map((d: { path: string }) => d.path)).to.deep.equal(["tokenId"]);
    });

    it("of an edition that does not exist answers 404 TOKEN_NOT_FOUND, and sends nothing", async function () {
      const res = await expectNoGasSpent(f.provider, minter.address, () => mint("999999", 1));
      expectError(res, 404, "TOKEN_NOT_FOUND");
    });

    it("past the edition's maxSupply answers 409 MAX_SUPPLY_EXCEEDED, and sends nothing", async function () {
      const tokenId = await createEdition({ maxSupply: 4, maxMintAmountPerTx: 5 });
      expect((await mint(tokenId.toString(), 3)).status).to.equal(200);
      const res = await expectNoGasSpent(f.provider, minter.address, () => mint(tokenId.toString(), 2));
      expectError(res, 409, "MAX_SUPPLY_EXCEEDED");
    });

    it("above the edition's maxMintAmountPerTx answers 422 INVALID_MINT_AMOUNT", async function () {
      const tokenId = await createEdition({ maxMintAmountPerTx: 2 });
      expectError(await mint(tokenId.toString(), 3), 422, "INVALID_MINT_AMOUNT");
    });

    it("a repeat with the same Idempotency-Key answers the first byte for byte and sends one transaction", async function () {
      const tokenId = await createEdition();
      const key = { "Idempotency-Key": `edition-mint-${Date.now()}` };
      const nonce = await f.provider.getTransactionCount(minter.address);
      const first = await mint(tokenId.toString(), 2, minter.privateKey, key);
      expect(first.status, first.text).to.equal(200);
      const again = await mint(tokenId.toString(), 2, minter.privateKey, key);
      expect(again.status).to.equal(200);
      expect(again.text).to.equal(first.text);
      expect(again.headers.get("idempotent-replayed")).to.equal("true");
      expect(await f.provider.getTransactionCount(minter.address)).to.equal(nonce + 1);
      expect(await onChain.balanceOf(minter.address, tokenId)).to.equal(2n);
    });
  });

  describe("POST /nft/mint?dryRun=true on an edition", function () {
    it("?dryRun=true shows the edition's call and result fields, and sends nothing", async function () {
      const tokenId = await createEdition({ cost: "300" });
      const res = await expectNoGasSpent(f.provider, minter.address, () =>
        f.api.post("/nft/mint?dryRun=true", {
          privateKey: minter.privateKey,
          contractAddress: editions,
          tokenId: tokenId.toString(),
          mintAmount: 2,
        }),
      );
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ dryRun: true, operation: "mint", changed: true });
      expect(res.body.result).to.deep.equal({ tokenId: tokenId.toString(), amount: "2", value: "600" });
      expect(await onChain.balanceOf(minter.address, tokenId)).to.equal(0n);
    });
  });

  describe("POST /nft/mintForFree and /nft/airdrop on an edition", function () {
    it("mintForFree mints the amount to the receiver at no cost, answering tokenId, amount and receiver", async function () {
      const tokenId = await createEdition();
      const receiver = Wallet.createRandom().address;
      const res = await post("/nft/mintForFree", { tokenId: Number(tokenId), mintAmount: 4, receiver });
      await expectConfirmedWrite(res, f.provider, {
        from: f.owner.address,
        contractAddress: editions,
        extra: ["tokenId", "amount", "receiver"],
      });
      expect(res.body).to.include({ tokenId: tokenId.toString(), amount: "4", receiver });
      expect(await onChain.balanceOf(receiver, tokenId)).to.equal(4n);
    });

    it("mintForFree to a contract that refuses ERC-1155 tokens answers 422 CONTRACT_REVERTED saying so, and sends nothing", async function () {
      const tokenId = await createEdition();
      const refuser = await deployBytecode((await f.fundedWallet()).connect(f.provider), ALWAYS_REVERTS);
      const res = await expectNoGasSpent(f.provider, f.owner.address, () =>
        post("/nft/mintForFree", { tokenId: tokenId.toString(), mintAmount: 1, receiver: refuser }),
      );
      const error = expectError(res, 422, "CONTRACT_REVERTED");
      expect(error.message).to.include("does not accept ERC-1155 tokens").and.include(getAddress(refuser));
      expect(error.details[0].message).to.match(/^ERC1155InvalidReceiver\(/);
    });

    it("airdrop mints each recipient's amount of the edition in one transaction, answering each amount", async function () {
      const tokenId = await createEdition({ maxSupply: 10 });
      const [a, b] = [Wallet.createRandom().address, Wallet.createRandom().address];
      const res = await post("/nft/airdrop", {
        tokenId: tokenId.toString(),
        recipients: [
          { address: a, amount: 2 },
          { address: b, amount: "5" },
        ],
      });
      await expectConfirmedWrite(res, f.provider, {
        from: f.owner.address,
        contractAddress: editions,
        extra: ["tokenId", "recipients"],
      });
      expect(res.body.tokenId).to.equal(tokenId.toString());
      expect(res.body.recipients).to.deep.equal([
        { address: a, amount: "2" },
        { address: b, amount: "5" },
      ]);
      expect(await onChain.balanceOf(a, tokenId)).to.equal(2n);
      expect(await onChain.balanceOf(b, tokenId)).to.equal(5n);
    });

    it("airdrop past the edition's maxSupply answers 409 MAX_SUPPLY_EXCEEDED; without tokenId 400 naming tokenId", async function () {
      const tokenId = await createEdition({ maxSupply: 3 });
      const recipients = [{ address: Wallet.createRandom().address, amount: 4 }];
      expectError(await post("/nft/airdrop", { tokenId: tokenId.toString(), recipients }), 409, "MAX_SUPPLY_EXCEEDED");
      const missing = expectError(await post("/nft/airdrop", { recipients }), 400, "VALIDATION_ERROR");
      expect(missing.message).to.include("tokenId");
    });
  });

  describe("POST /nft/setCost and /nft/setPaused on an edition", function () {
    it("setCost changes that edition's price (the next mint pays it); the same price again answers changed:false", async function () {
      const tokenId = await createEdition({ cost: "1000" });
      const other = await createEdition({ cost: "1000" });
      const res = await post("/nft/setCost", { tokenId: tokenId.toString(), cost: "2500" });
      await expectConfirmedWrite(res, f.provider, {
        from: f.owner.address,
        contractAddress: editions,
        extra: ["tokenId", "cost", "changed"],
      });
      expect(res.body).to.include({ tokenId: tokenId.toString(), cost: "2500", changed: true });
      expect(await onChain.cost(tokenId)).to.equal(2500n);
      expect(await onChain.cost(other)).to.equal(1000n);
      expect((await mint(tokenId.toString(), 2)).body.value).to.equal("5000");
      const again = await post("/nft/setCost", { tokenId: tokenId.toString(), cost: "2500" });
      expect(again.status, again.text).to.equal(200);
      expect(again.body.changed).to.equal(false);
    });

    it("setCost of an edition that does not exist answers 404 TOKEN_NOT_FOUND; without tokenId 400 naming tokenId", async function () {
      expectError(await post("/nft/setCost", { tokenId: "999999", cost: 1 }), 404, "TOKEN_NOT_FOUND");
      expect(expectError(await post("/nft/setCost", { cost: 1 }), 400, "VALIDATION_ERROR").message).to.include(
        "tokenId",
      );
    });

    it("setPaused with tokenId pauses that edition alone (its mint 409 CONTRACT_PAUSED, another's mints), and resumes it", async function () {
      const tokenId = await createEdition();
      const other = await createEdition();
      const res = await post("/nft/setPaused", { tokenId: tokenId.toString(), state: true });
      await expectConfirmedWrite(res, f.provider, {
        from: f.owner.address,
        contractAddress: editions,
        extra: ["tokenId", "paused", "changed"],
      });
      expect(res.body).to.include({ tokenId: tokenId.toString(), paused: true, changed: true });
      expect(await onChain.editionPaused(tokenId)).to.equal(true);
      expect(await onChain.paused()).to.equal(false);
      const paused = await expectNoGasSpent(f.provider, minter.address, () => mint(tokenId.toString(), 1));
      const error = expectError(paused, 409, "CONTRACT_PAUSED");
      expect(error.message).to.equal(
        `Minting of edition ${tokenId} of ${editions} is paused; its owner resumes it with POST /nft/setPaused {"tokenId":"${tokenId}","state":false}`,
      );
      expect(error.details).to.deep.equal([{ path: "revert", message: `EditionPaused(tokenId=${tokenId})` }]);
      expect((await mint(other.toString(), 1)).status).to.equal(200);
      expect((await post("/nft/setPaused", { tokenId: tokenId.toString(), state: false })).body.changed).to.equal(true);
      expect((await mint(tokenId.toString(), 1)).status).to.equal(200);
    });

    it("setPaused without tokenId pauses the whole contract (every edition's mint 409 CONTRACT_PAUSED), and resumes it", async function () {
      const tokenId = await createEdition();
      const res = await post("/nft/setPaused", { state: true });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ paused: true, changed: true });
      expect(res.body).to.not.have.property("tokenId");
      try {
        expect(await onChain.paused()).to.equal(true);
        expectError(await mint(tokenId.toString(), 1), 409, "CONTRACT_PAUSED");
      } finally {
        expect((await post("/nft/setPaused", { state: false })).status).to.equal(200);
      }
      expect(await onChain.paused()).to.equal(false);
      expect((await mint(tokenId.toString(), 1)).status).to.equal(200);
    });
  });

  describe("reads of an edition", function () {
    it("tokenURI answers uri(id): the base URI, the id and .json; 404 TOKEN_NOT_FOUND for an edition that does not exist", async function () {
      const tokenId = await createEdition();
      const res = await post("/nft/tokenURI", { tokenId: tokenId.toString() });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ tokenId: tokenId.toString(), tokenURI: `${BASE_URI}${tokenId}.json` });
      expectError(await post("/nft/tokenURI", { tokenId: "999999" }), 404, "TOKEN_NOT_FOUND");
    });

    it("total-supply answers the edition's supply and maxSupply, and the caller's balance of it", async function () {
      const tokenId = await createEdition({ maxSupply: 50 });
      expect((await mint(tokenId.toString(), 3)).status).to.equal(200);
      const res = await post("/nft/total-supply", { privateKey: minter.privateKey, tokenId: tokenId.toString() });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({
        tokenId: tokenId.toString(),
        totalSupply: "3",
        maxSupply: "50",
        wallet: { address: minter.address, balances: { [tokenId.toString()]: "3" } },
      });
    });

    it("total-supply of an open edition has no maxSupply; of none 404 TOKEN_NOT_FOUND; without tokenId 400 naming it", async function () {
      const tokenId = await createEdition({ maxSupply: 0 });
      const res = await post("/nft/total-supply", { tokenId: tokenId.toString() });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({
        tokenId: tokenId.toString(),
        totalSupply: "0",
        wallet: { address: f.owner.address, balances: { [tokenId.toString()]: "0" } },
      });
      expectError(await post("/nft/total-supply", { tokenId: "999999" }), 404, "TOKEN_NOT_FOUND");
      expect(expectError(await post("/nft/total-supply", {}), 400, "VALIDATION_ERROR").message).to.include("tokenId");
    });
  });

  describe("whitelist routes on an editions contract", function () {
    it("addUserAddressToWhitelist and addToWhitelist list addresses; in whitelist-only mode a listed key mints, another gets 403 NOT_WHITELISTED", async function () {
      const tokenId = await createEdition();
      const [listed, batch] = [await f.fundedWallet(), Wallet.createRandom().address];
      const one = await post("/nft/addUserAddressToWhitelist", { address: listed.address });
      expect(one.status, one.text).to.equal(200);
      const many = await post("/nft/addToWhitelist", { addresses: [batch] });
      expect(many.status, many.text).to.equal(200);
      expect(await onChain.whitelisted(listed.address)).to.equal(true);
      expect(await onChain.whitelisted(batch)).to.equal(true);
      // No route switches whitelist-only mode (as for ERC-721): the owner does it on chain.
      const asOwner = onChain.connect(f.owner.connect(f.provider)) as Contract;
      await (await asOwner.setWhitelistOnly(true)).wait();
      try {
        expect((await mint(tokenId.toString(), 1, listed.privateKey)).status).to.equal(200);
        const refused = await expectNoGasSpent(f.provider, minter.address, () => mint(tokenId.toString(), 1));
        expectError(refused, 403, "NOT_WHITELISTED");
      } finally {
        await (await asOwner.setWhitelistOnly(false)).wait();
      }
    });
  });

  describe("POST /nft/withdraw on an editions contract", function () {
    it("sends the contract's whole balance (what mints paid) to the owner", async function () {
      const tokenId = await createEdition({ cost: parseEther("0.5").toString() });
      expect((await mint(tokenId.toString(), 2)).status).to.equal(200);
      const held = await f.provider.getBalance(editions);
      expect(held >= parseEther("1")).to.equal(true);
      const res = await post("/nft/withdraw", {}, { API_KEY: TEST_API_KEY });
      await expectConfirmedWrite(res, f.provider, {
        from: f.owner.address,
        contractAddress: editions,
        extra: ["amount", "to"],
      });
      expect(res.body).to.include({ amount: held.toString(), to: f.owner.address });
      expect(await f.provider.getBalance(editions)).to.equal(0n);
    });
  });

  describe("tokenId on an ERC-721 collection", function () {
    it("mint, setCost and setPaused given tokenId answer 400 VALIDATION_ERROR naming tokenId, and send nothing", async function () {
      const on721 = { contractAddress: erc721, tokenId: 1 };
      const answers: ApiResponse[] = await expectNoGasSpent(f.provider, f.owner.address, () =>
        Promise.all([
          post("/nft/mint", { ...on721, mintAmount: 1 }),
          post("/nft/setCost", { ...on721, cost: 1 }),
          post("/nft/setPaused", { ...on721, state: true }),
        ]),
      );
      for (const res of answers) {
        const error = expectError(res, 400, "VALIDATION_ERROR");
        expect(error.message).to.include("tokenId").and.include("ERC-721");
      }
    });
  });

  describe("allowlists and vouchers (ERC-721 only in this version)", function () {
    it("each route answers 400 VALIDATION_ERROR naming the standard on an edition contract, and sends nothing", async function () {
      const buyer = Wallet.createRandom().address;
      const voucher = { to: buyer, amount: "1", price: "0", validUntil: "9999999999", id: `0x${"ab".repeat(32)}` };
      const answers: ApiResponse[] = await expectNoGasSpent(f.provider, f.owner.address, () =>
        Promise.all([
          f.api.request("PUT", `/collections/${editions}/allowlist`, {
            json: { privateKey: f.owner.privateKey, entries: [{ address: buyer, allowance: "1", price: "0" }] },
          }),
          post("/nft/allowlistMint", { mintAmount: 1 }),
          f.api.post(`/collections/${editions}/vouchers`, {
            privateKey: f.owner.privateKey,
            to: buyer,
            amount: 1,
            price: 0,
          }),
          post("/nft/mintWithVoucher", { voucher, signature: `0x${"11".repeat(65)}` }),
          f.api.get(`/collections/${editions}/allowlist`),
          f.api.get(`/collections/${editions}/allowlist/${buyer}`),
          f.api.get(`/collections/${editions}/vouchers/${voucher.id}`),
        ]),
      );
      for (const res of answers) {
        const error = expectError(res, 400, "VALIDATION_ERROR");
        expect(error.message).to.match(/^(Allowlists|Vouchers) are ERC-721 only; /);
        expect(error.message).to.include(`${editions} is an ERC-1155 edition contract`);
      }
    });
  });

  describe("the OpenAPI document", function () {
    it("describes createEdition and the edition fields of mint and total-supply", async function () {
      const doc = (await f.api.get("/openapi.json")).body;
      expect(doc.paths).to.have.property("/nft/createEdition");
      const schemas = doc.components.schemas;
      expect(schemas.MintRequest.properties).to.have.property("tokenId");
      expect(schemas.MintResponse.properties).to.include.keys("tokenId", "amount", "tokenIds");
      expect(schemas.TotalSupplyResponse.properties.wallet.properties).to.have.property("balances");
      expect(schemas.DeployRequest.properties.standard.enum).to.deep.equal(["erc721", "erc1155"]);
    });
  });

  describeSecrets(f);
});
