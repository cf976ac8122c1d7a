import { expect } from "chai";
import { getAddress, parseEther, Wallet, type Contract, type JsonRpcProvider } from "ethers";
import {
  WRITE_FIELDS,
  accountState,
  expectConfirmedWrite,
  expectError,
  expectNoGasSpent,
  expectNoSecretsIn,
  withoutOperationId,
} from "./expectations";
import {
  DEV_KEYS,
  TEST_API_KEY,
  collectionAt,
  deployBytecode,
  deployDirectly,
  freshWallet,
  type ApiClient,
  type ApiResponse,
} from "./harness";
import { sharedService, type SharedService } from "./shared-service";

/** What scripts/deploy.ts and POST /nft/deploy use when given nothing (server/chain/collection.ts). */
const DEFAULT_BASE_URI = "ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/";
const DEFAULT_COST = parseEther("0.01");

/** Init code of a contract whose every call returns the word 42: code, but no ERC-721 (nor ERC-165). */
const ANSWERS_42 = "0x600a600c600039600a6000f3602a60005260206000f3";
/** Init code of a contract whose every call reverts without data: no supportsInterface at all. */
const ALWAYS_REVERTS = "0x6005600c60003960056000f360006000fd";

describe("the /nft operations", function () {
  let shared: SharedService;
  let api: ApiClient;
  let provider: JsonRpcProvider;
  let collection: string;
  let reference: Contract;

  const owner = new Wallet(DEV_KEYS[0]);
  const stranger = new Wallet(DEV_KEYS[1]);
  const whitelistedMinter = new Wallet(DEV_KEYS[2]);
  const minter = new Wallet(DEV_KEYS[5]);
  const whitelistOwner = new Wallet(DEV_KEYS[6]);
  const receiver = new Wallet(DEV_KEYS[7]);
  const rawDeployer = new Wallet(DEV_KEYS[9]);

  before(async function () {
    this.timeout(150_000);
    shared = await sharedService();
    ({ api, provider, collection } = shared);
    reference = collectionAt(collection, provider);
  });

  /** Deploys a collection through the API (account #0 unless told) and returns its address. */
  async function deployThroughApi(fields: Record<string, unknown> = {}, key: string = DEV_KEYS[0]): Promise<string> {
    const res = await api.post("/nft/deploy", { privateKey: key, ...fields });
    expect(res.status, res.text).to.equal(201);
    return res.body.contractAddress as string;
  }

  const mint = (key: string, contractAddress: string, mintAmount: unknown) =>
    api.post("/nft/mint", { privateKey: key, contractAddress, mintAmount });

  describe("POST /nft/mint", function () {
    it("minting 2 tokens answers 200 with their ids and value = cost × 2, and the caller owns them", async function () {
      const [supplyBefore, cost, contractBalanceBefore] = await Promise.all([
        reference.totalSupply() as Promise<bigint>,
        reference.cost() as Promise<bigint>,
        provider.getBalance(collection),
      ]);
      expect(cost).to.equal(DEFAULT_COST);
      const res = await mint(minter.privateKey, collection, 2);
      await expectConfirmedWrite(res, provider, {
        from: minter.address,
        contractAddress: collection,
        extra: ["tokenIds", "value"],
      });
      expect(res.body.tokenIds).to.deep.equal([String(supplyBefore + 1n), String(supplyBefore + 2n)]);
      expect(res.body.value).to.equal((cost * 2n).toString());
      for (const id of res.body.tokenIds) expect(await reference.ownerOf(id)).to.equal(minter.address);
      expect(await provider.getBalance(collection)).to.equal(contractBalanceBefore + cost * 2n);
    });

    it("mintAmount is accepted as a decimal string as well as a JSON integer", async function () {
      const asString = await mint(minter.privateKey, collection, "1");
      expect(asString.status, asString.text).to.equal(200);
      expect(asString.body.tokenIds).to.have.length(1);
      const asNumber = await mint(minter.privateKey, collection, 1);
      expect(asNumber.status, asNumber.text).to.equal(200);
      expect(asNumber.body.tokenIds).to.have.length(1);
      expect(BigInt(asNumber.body.tokenIds[0])).to.equal(BigInt(asString.body.tokenIds[0]) + 1n);
    });

    it("a privateKey without 0x and a lower-case contractAddress are accepted; from is the checksummed caller", async function () {
      const res = await mint(minter.privateKey.slice(2).toUpperCase(), collection.toLowerCase(), "1");
      expect(res.status, res.text).to.equal(200);
      expect(res.body.from).to.equal(minter.address);
      expect(res.body.contractAddress).to.equal(getAddress(collection));
    });

    it("minting 0 tokens answers 422 INVALID_MINT_AMOUNT and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, minter.address, () => mint(minter.privateKey, collection, 0));
      expectError(res, 422, "INVALID_MINT_AMOUNT");
    });

    it("minting more than maxMintAmountPerTx (11 > 10) answers 422 INVALID_MINT_AMOUNT and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, minter.address, () => mint(minter.privateKey, collection, "11"));
      expectError(res, 422, "INVALID_MINT_AMOUNT");
    });

    it("minting 10^70 tokens (cost × amount beyond 256 bits) answers 422 INVALID_MINT_AMOUNT and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, minter.address, () =>
        mint(minter.privateKey, collection, `1${"0".repeat(70)}`),
      );
      expectError(res, 422, "INVALID_MINT_AMOUNT");
    });

    it("minting from a fresh key with no ether answers 402 INSUFFICIENT_FUNDS and sends nothing", async function () {
      const poor = freshWallet();
      const res = await expectNoGasSpent(provider, poor.address, () => mint(poor.privateKey, collection, 1));
      expectError(res, 402, "INSUFFICIENT_FUNDS");
      expect(await accountState(provider, poor.address)).to.deep.equal({
        address: poor.address,
        balance: 0n,
        nonce: 0,
      });
    });

    it("minting from a key that can pay the gas but not cost × mintAmount answers 402 INSUFFICIENT_FUNDS", async function () {
      const thin = freshWallet();
      const funder = new Wallet(DEV_KEYS[9], provider);
      await (await funder.sendTransaction({ to: thin.address, value: parseEther("0.005") })).wait();
      const res = await expectNoGasSpent(provider, thin.address, () => mint(thin.privateKey, collection, 1));
      expectError(res, 402, "INSUFFICIENT_FUNDS");
    });

    it("minting on a free collection from a key with no ether still answers 402 INSUFFICIENT_FUNDS (gas)", async function () {
      const free = await deployThroughApi({ cost: "0" });
      const poor = freshWallet();
      const res = await expectNoGasSpent(provider, poor.address, () => mint(poor.privateKey, free, 1));
      expectError(res, 402, "INSUFFICIENT_FUNDS");
    });

    it("minting at an address without code (an EOA) answers 404 CONTRACT_NOT_FOUND and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, minter.address, () => mint(minter.privateKey, receiver.address, 1));
      expectError(res, 404, "CONTRACT_NOT_FOUND");
    });
  });

  describe("POST /nft/tokenURI", function () {
    let tokenId: string;

    before(async function () {
      const res = await mint(minter.privateKey, collection, 1);
      expect(res.status, res.text).to.equal(200);
      tokenId = res.body.tokenIds[0];
    });

    it("answers exactly {tokenId, tokenURI} with tokenURI = baseURI + id + '.json'", async function () {
      const res = await api.post("/nft/tokenURI", {
        privateKey: minter.privateKey,
        contractAddress: collection,
        tokenId,
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ tokenId, tokenURI: `${DEFAULT_BASE_URI}${tokenId}.json` });
    });

    it("accepts tokenId as a JSON integer and answers it as a decimal string", async function () {
      const res = await api.post("/nft/tokenURI", {
        privateKey: stranger.privateKey,
        contractAddress: collection,
        tokenId: Number(tokenId),
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ tokenId, tokenURI: `${DEFAULT_BASE_URI}${tokenId}.json` });
    });

    it("is a read: the caller's nonce and balance do not change", async function () {
      const res = await expectNoGasSpent(provider, minter.address, () =>
        api.post("/nft/tokenURI", { privateKey: minter.privateKey, contractAddress: collection, tokenId }),
      );
      expect(res.status).to.equal(200);
    });

    for (const missing of ["0", "999999", `1${"0".repeat(76)}`]) {
      it(`tokenURI of token ${missing.length > 10 ? "10^76" : missing} (never minted) answers 404 TOKEN_NOT_FOUND`, async function () {
        const res = await api.post("/nft/tokenURI", {
          privateKey: minter.privateKey,
          contractAddress: collection,
          tokenId: missing,
        });
        expectError(res, 404, "TOKEN_NOT_FOUND");
      });
    }

    it("a tokenId of 2^256 (no uint256) answers 400 VALIDATION_ERROR", async function () {
      const res = await api.post("/nft/tokenURI", {
        privateKey: minter.privateKey,
        contractAddress: collection,
        tokenId: (2n ** 256n).toString(),
      });
      expectError(res, 400, "VALIDATION_ERROR");
    });

    it("tokenURI without tokenId answers 400 VALIDATION_ERROR", async function () {
      const res = await api.post("/nft/tokenURI", { privateKey: minter.privateKey, contractAddress: collection });
      expectError(res, 400, "VALIDATION_ERROR");
    });

    it("tokenURI at an EOA answers 404 CONTRACT_NOT_FOUND", async function () {
      const res = await api.post("/nft/tokenURI", {
        privateKey: minter.privateKey,
        contractAddress: receiver.address,
        tokenId,
      });
      expectError(res, 404, "CONTRACT_NOT_FOUND");
    });
  });

  describe("POST /nft/total-supply", function () {
    it("answers totalSupply, maxSupply and wallet = walletOfOwner of the caller, as decimal strings", async function () {
      const res = await api.post("/nft/total-supply", { privateKey: minter.privateKey, contractAddress: collection });
      expect(res.status, res.text).to.equal(200);
      const [totalSupply, maxSupply, wallet] = await Promise.all([
        reference.totalSupply() as Promise<bigint>,
        reference.maxSupply() as Promise<bigint>,
        reference.walletOfOwner(minter.address) as Promise<bigint[]>,
      ]);
      expect(wallet.length).to.be.greaterThan(0);
      expect(res.body).to.deep.equal({
        totalSupply: totalSupply.toString(),
        maxSupply: maxSupply.toString(),
        wallet: { address: minter.address, tokenIds: wallet.map(String) },
      });
      expect(maxSupply).to.equal(10_000n);
    });

    it("for a caller holding no token the wallet lists no ids, and a key with no ether may read", async function () {
      const nobody = freshWallet();
      const res = await api.post("/nft/total-supply", { privateKey: nobody.privateKey, contractAddress: collection });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.wallet).to.deep.equal({ address: nobody.address, tokenIds: [] });
    });

    it("at an EOA answers 404 CONTRACT_NOT_FOUND", async function () {
      const res = await api.post("/nft/total-supply", {
        privateKey: minter.privateKey,
        contractAddress: stranger.address,
      });
      expectError(res, 404, "CONTRACT_NOT_FOUND");
    });
  });

  describe("POST /nft/mintForFree", function () {
    it("without receiver mints to the caller (the owner) and answers tokenIds and receiver", async function () {
      const supplyBefore: bigint = await reference.totalSupply();
      const res = await api.post("/nft/mintForFree", {
        privateKey: owner.privateKey,
        contractAddress: collection,
        mintAmount: "2",
      });
      await expectConfirmedWrite(res, provider, {
        from: owner.address,
        contractAddress: collection,
        extra: ["tokenIds", "receiver"],
      });
      expect(res.body.receiver).to.equal(owner.address);
      expect(res.body.tokenIds).to.deep.equal([String(supplyBefore + 1n), String(supplyBefore + 2n)]);
      for (const id of res.body.tokenIds) expect(await reference.ownerOf(id)).to.equal(owner.address);
    });

    it("with an explicit receiver mints to the receiver, who pays nothing", async function () {
      const receiverBefore = await accountState(provider, receiver.address);
      const res = await api.post("/nft/mintForFree", {
        privateKey: owner.privateKey,
        contractAddress: collection,
        mintAmount: 3,
        receiver: receiver.address.toLowerCase(),
      });
      await expectConfirmedWrite(res, provider, {
        from: owner.address,
        contractAddress: collection,
        extra: ["tokenIds", "receiver"],
      });
      expect(res.body.receiver).to.equal(receiver.address);
      expect(res.body.tokenIds).to.have.length(3);
      for (const id of res.body.tokenIds) expect(await reference.ownerOf(id)).to.equal(receiver.address);
      expect(await accountState(provider, receiver.address)).to.deep.equal(receiverBefore);
    });

    it("by an account that is not the owner answers 403 NOT_CONTRACT_OWNER and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, stranger.address, () =>
        api.post("/nft/mintForFree", { privateKey: stranger.privateKey, contractAddress: collection, mintAmount: 1 }),
      );
      expectError(res, 403, "NOT_CONTRACT_OWNER");
    });

    it("of 0 tokens answers 422 INVALID_MINT_AMOUNT and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, owner.address, () =>
        api.post("/nft/mintForFree", { privateKey: owner.privateKey, contractAddress: collection, mintAmount: 0 }),
      );
      expectError(res, 422, "INVALID_MINT_AMOUNT");
    });

    it("to the zero address answers 422 CONTRACT_REVERTED with the decoded reason, no gas spent", async function () {
      const res = await expectNoGasSpent(provider, owner.address, () =>
        api.post("/nft/mintForFree", {
          privateKey: owner.privateKey,
          contractAddress: collection,
          mintAmount: 1,
          receiver: "0x0000000000000000000000000000000000000000",
        }),
      );
      const error = expectError(res, 422, "CONTRACT_REVERTED");
      expect(error.message).to.include("MintToZeroAddress");
    });

    it("to a contract that cannot receive ERC-721 tokens answers 422 CONTRACT_REVERTED with the decoded reason", async function () {
      const res = await api.post("/nft/mintForFree", {
        privateKey: owner.privateKey,
        contractAddress: collection,
        mintAmount: 1,
        receiver: collection,
      });
      const error = expectError(res, 422, "CONTRACT_REVERTED");
      expect(error.message).to.include("TransferToNonERC721ReceiverImplementer");
    });

    it("with a malformed receiver answers 400 VALIDATION_ERROR", async function () {
      const res = await api.post("/nft/mintForFree", {
        privateKey: owner.privateKey,
        contractAddress: collection,
        mintAmount: 1,
        receiver: "0x1234",
      });
      const error = expectError(res, 400, "VALIDATION_ERROR");
      expect(error.details.map((d: { path: string }) => d.path)).to.include("receiver");
    });
  });

  describe("POST /nft/addUserAddressToWhitelist and whitelist-only minting", function () {
    let listed: string;
    let listedContract: Contract;

    before(async function () {
      // The API has no route for setWhitelistOnly: the owner switches it on directly.
      const ownerSigner = whitelistOwner.connect(provider);
      listed = await deployDirectly(ownerSigner);
      listedContract = collectionAt(listed, ownerSigner);
      await (await listedContract.setWhitelistOnly(true)).wait();
    });

    it("minting while whitelist-only is on and the caller is not listed answers 403 NOT_WHITELISTED, no gas spent", async function () {
      const res = await expectNoGasSpent(provider, whitelistedMinter.address, () =>
        mint(whitelistedMinter.privateKey, listed, 1),
      );
      expectError(res, 403, "NOT_WHITELISTED");
    });

    it("the owner adding an address answers whitelisted:true, changed:true with a confirmed transaction", async function () {
      const res = await api.post("/nft/addUserAddressToWhitelist", {
        privateKey: whitelistOwner.privateKey,
        contractAddress: listed,
        address: whitelistedMinter.address.toLowerCase(),
      });
      await expectConfirmedWrite(res, provider, {
        from: whitelistOwner.address,
        contractAddress: listed,
        extra: ["address", "whitelisted", "changed"],
      });
      expect(res.body.address).to.equal(whitelistedMinter.address);
      expect(res.body.whitelisted).to.equal(true);
      expect(res.body.changed).to.equal(true);
      expect(await listedContract.whitelisted(whitelistedMinter.address)).to.equal(true);
    });

    it("the listed caller can then mint", async function () {
      const res = await mint(whitelistedMinter.privateKey, listed, 1);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.tokenIds).to.deep.equal(["1"]);
    });

    it("adding an address that is already listed answers changed:false without write fields and sends no transaction", async function () {
      const res = await expectNoGasSpent(provider, whitelistOwner.address, () =>
        api.post("/nft/addUserAddressToWhitelist", {
          privateKey: whitelistOwner.privateKey,
          contractAddress: listed,
          address: whitelistedMinter.address,
        }),
      );
      expect(res.status, res.text).to.equal(200);
      expect(withoutOperationId(res.body)).to.deep.equal({
        address: whitelistedMinter.address,
        whitelisted: true,
        changed: false,
      });
      for (const field of WRITE_FIELDS.filter((f) => f !== "operationId")) expect(res.body).to.not.have.property(field);
    });

    it("by an account that is not the owner answers 403 NOT_CONTRACT_OWNER and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, stranger.address, () =>
        api.post("/nft/addUserAddressToWhitelist", {
          privateKey: stranger.privateKey,
          contractAddress: listed,
          address: stranger.address,
        }),
      );
      expectError(res, 403, "NOT_CONTRACT_OWNER");
      expect(await listedContract.whitelisted(stranger.address)).to.equal(false);
    });

    it("by a non-owner for an address already listed still answers 403 NOT_CONTRACT_OWNER", async function () {
      const res = await api.post("/nft/addUserAddressToWhitelist", {
        privateKey: stranger.privateKey,
        contractAddress: listed,
        address: whitelistedMinter.address,
      });
      expectError(res, 403, "NOT_CONTRACT_OWNER");
    });

    it("with a malformed address answers 400 VALIDATION_ERROR naming address", async function () {
      const res = await api.post("/nft/addUserAddressToWhitelist", {
        privateKey: whitelistOwner.privateKey,
        contractAddress: listed,
        address: "0xnothex",
      });
      const error = expectError(res, 400, "VALIDATION_ERROR");
      expect(error.details.map((d: { path: string }) => d.path)).to.include("address");
    });
  });

  describe("POST /nft/setPaused", function () {
    let pausable: string;
    let pausableContract: Contract;

    before(async function () {
      pausable = await deployThroughApi();
      pausableContract = collectionAt(pausable, provider);
    });

    const setPaused = (state: unknown, key: string = owner.privateKey) =>
      api.post("/nft/setPaused", { privateKey: key, contractAddress: pausable, state });

    it("state true answers paused:true, changed:true with a confirmed transaction; paused() is true on chain", async function () {
      const res = await setPaused(true);
      await expectConfirmedWrite(res, provider, {
        from: owner.address,
        contractAddress: pausable,
        extra: ["paused", "changed"],
      });
      expect(res.body.paused).to.equal(true);
      expect(res.body.changed).to.equal(true);
      expect(await pausableContract.paused()).to.equal(true);
    });

    it("state true again answers exactly {paused:true, changed:false} and sends no transaction", async function () {
      const res = await expectNoGasSpent(provider, owner.address, () => setPaused(true));
      expect(res.status, res.text).to.equal(200);
      expect(withoutOperationId(res.body)).to.deep.equal({ paused: true, changed: false });
    });

    it("minting while paused answers 409 CONTRACT_PAUSED and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, minter.address, () => mint(minter.privateKey, pausable, 1));
      expectError(res, 409, "CONTRACT_PAUSED");
    });

    it("mintForFree by the owner still works while paused", async function () {
      const res = await api.post("/nft/mintForFree", {
        privateKey: owner.privateKey,
        contractAddress: pausable,
        mintAmount: 1,
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.tokenIds).to.have.length(1);
    });

    it("by an account that is not the owner answers 403 NOT_CONTRACT_OWNER and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, stranger.address, () => setPaused(false, stranger.privateKey));
      expectError(res, 403, "NOT_CONTRACT_OWNER");
      expect(await pausableContract.paused()).to.equal(true);
    });

    it("by a non-owner asking for the current state still answers 403 NOT_CONTRACT_OWNER", async function () {
      expectError(await setPaused(true, stranger.privateKey), 403, "NOT_CONTRACT_OWNER");
    });

    it('the string "false" resumes minting (changed:true), and "false" again answers changed:false', async function () {
      const res = await setPaused("false");
      await expectConfirmedWrite(res, provider, {
        from: owner.address,
        contractAddress: pausable,
        extra: ["paused", "changed"],
      });
      expect(res.body).to.include({ paused: false, changed: true });
      expect(await pausableContract.paused()).to.equal(false);
      const again = await expectNoGasSpent(provider, owner.address, () => setPaused("false"));
      expect(withoutOperationId(again.body)).to.deep.equal({ paused: false, changed: false });
      const minted = await mint(minter.privateKey, pausable, 1);
      expect(minted.status, minted.text).to.equal(200);
    });

    it('the string "true" pauses', async function () {
      const res = await setPaused("true");
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ paused: true, changed: true });
      expect(await pausableContract.paused()).to.equal(true);
    });

    for (const state of ["yes", 1, null]) {
      it(`state ${JSON.stringify(state)} answers 400 VALIDATION_ERROR naming state`, async function () {
        const error = expectError(await setPaused(state), 400, "VALIDATION_ERROR");
        expect(error.details.map((d: { path: string }) => d.path)).to.include("state");
      });
    }
  });

  describe("POST /nft/setCost", function () {
    let priced: string;
    let pricedContract: Contract;

    before(async function () {
      priced = await deployThroughApi({ cost: "1000" });
      pricedContract = collectionAt(priced, provider);
    });

    const setCost = (cost: unknown, key: string = owner.privateKey) =>
      api.post("/nft/setCost", { privateKey: key, contractAddress: priced, cost });

    it("a new cost answers cost and changed:true with a confirmed transaction; the next mint pays it", async function () {
      const newCost = parseEther("0.02");
      const res = await setCost(newCost.toString());
      await expectConfirmedWrite(res, provider, {
        from: owner.address,
        contractAddress: priced,
        extra: ["cost", "changed"],
      });
      expect(res.body.cost).to.equal(newCost.toString());
      expect(res.body.changed).to.equal(true);
      expect(await pricedContract.cost()).to.equal(newCost);
      const minted = await mint(minter.privateKey, priced, 3);
      expect(minted.status, minted.text).to.equal(200);
      expect(minted.body.value).to.equal((newCost * 3n).toString());
      expect(await provider.getBalance(priced)).to.equal(newCost * 3n);
    });

    it("the current cost answers exactly {cost, changed:false} and sends no transaction", async function () {
      const current: bigint = await pricedContract.cost();
      const res = await expectNoGasSpent(provider, owner.address, () => setCost(current.toString()));
      expect(res.status, res.text).to.equal(200);
      expect(withoutOperationId(res.body)).to.deep.equal({ cost: current.toString(), changed: false });
    });

    it("a cost above 2^53 sent as a decimal string is set exactly", async function () {
      const big = 2n ** 53n + 1n;
      const res = await setCost(big.toString());
      expect(res.status, res.text).to.equal(200);
      expect(res.body.cost).to.equal(big.toString());
      expect(await pricedContract.cost()).to.equal(big);
    });

    it("a cost sent as a JSON integer is accepted, and 0 makes minting free", async function () {
      const res = await setCost(0);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ cost: "0", changed: true });
      const minted = await mint(minter.privateKey, priced, 1);
      expect(minted.status, minted.text).to.equal(200);
      expect(minted.body.value).to.equal("0");
    });

    it("a cost above 2^128 - 1 (the contract's CostTooHigh) answers 422 CONTRACT_REVERTED naming the reason, no gas spent", async function () {
      const res = await expectNoGasSpent(provider, owner.address, () => setCost((2n ** 128n).toString()));
      const error = expectError(res, 422, "CONTRACT_REVERTED");
      expect(error.message).to.include("CostTooHigh");
    });

    it("by an account that is not the owner answers 403 NOT_CONTRACT_OWNER and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, stranger.address, () => setCost("5", stranger.privateKey));
      expectError(res, 403, "NOT_CONTRACT_OWNER");
      expect(await pricedContract.cost()).to.equal(0n);
    });

    for (const cost of [-1, "1.5", "abc", undefined]) {
      it(`cost ${JSON.stringify(cost) ?? "missing"} answers 400 VALIDATION_ERROR`, async function () {
        expectError(await setCost(cost), 400, "VALIDATION_ERROR");
      });
    }
  });

  describe("POST /nft/withdraw", function () {
    let funded: string;
    const cost = parseEther("1");

    before(async function () {
      funded = await deployThroughApi({ cost: cost.toString() });
      const res = await mint(minter.privateKey, funded, 2);
      expect(res.status, res.text).to.equal(200);
    });

    const withdraw = (headers: Record<string, string>, key: string = owner.privateKey) =>
      api.post("/nft/withdraw", { privateKey: key, contractAddress: funded }, headers);

    it("without an API key header answers 401 INVALID_API_KEY, sends nothing, and the contract keeps its ether", async function () {
      const res = await expectNoGasSpent(provider, owner.address, () => withdraw({}));
      expectError(res, 401, "INVALID_API_KEY");
      expect(await provider.getBalance(funded)).to.equal(cost * 2n);
    });

    it("with a wrong API_KEY answers 401 INVALID_API_KEY", async function () {
      const res = await expectNoGasSpent(provider, owner.address, () => withdraw({ API_KEY: `${TEST_API_KEY}x` }));
      expectError(res, 401, "INVALID_API_KEY");
    });

    it("with a wrong X-API-Key answers 401 INVALID_API_KEY", async function () {
      expectError(await withdraw({ "X-API-Key": "wrong" }), 401, "INVALID_API_KEY");
    });

    it("without an API key answers 401 INVALID_API_KEY even when the body is not JSON or fails validation (the key is checked first)", async function () {
      const notJson = await api.request("POST", "/nft/withdraw", { raw: `{"privateKey": "${owner.privateKey}", ` });
      expectError(notJson, 401, "INVALID_API_KEY");
      expectError(await api.post("/nft/withdraw", { contractAddress: "nope" }), 401, "INVALID_API_KEY");
      expectError(await api.request("POST", "/nft/withdraw", { raw: "x".repeat(150 * 1024) }), 401, "INVALID_API_KEY");
    });

    it("with the right API_KEY, a body that is not JSON answers 400 VALIDATION_ERROR", async function () {
      const res = await api.request("POST", "/nft/withdraw", {
        raw: `{"privateKey": "${owner.privateKey}", `,
        headers: { API_KEY: TEST_API_KEY },
      });
      expectError(res, 400, "VALIDATION_ERROR");
    });

    it("by an account that is not the owner, with the right API_KEY, answers 403 NOT_CONTRACT_OWNER and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, stranger.address, () =>
        withdraw({ API_KEY: TEST_API_KEY }, stranger.privateKey),
      );
      expectError(res, 403, "NOT_CONTRACT_OWNER");
      expect(await provider.getBalance(funded)).to.equal(cost * 2n);
    });

    it("by the owner with the API_KEY header sends the whole balance to the owner: amount and to", async function () {
      const ownerBefore = await provider.getBalance(owner.address);
      const res = await withdraw({ API_KEY: TEST_API_KEY });
      const receipt = await expectConfirmedWrite(res, provider, {
        from: owner.address,
        contractAddress: funded,
        extra: ["amount", "to"],
      });
      expect(res.body.amount).to.equal((cost * 2n).toString());
      expect(res.body.to).to.equal(owner.address);
      expect(await provider.getBalance(funded)).to.equal(0n);
      const fee = receipt.gasUsed * receipt.gasPrice;
      expect(await provider.getBalance(owner.address)).to.equal(ownerBefore + cost * 2n - fee);
    });

    it("with an empty contract answers 409 NOTHING_TO_WITHDRAW and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, owner.address, () => withdraw({ API_KEY: TEST_API_KEY }));
      expectError(res, 409, "NOTHING_TO_WITHDRAW");
    });

    it("accepts the key in an X-API-Key header too", async function () {
      const minted = await mint(minter.privateKey, funded, 1);
      expect(minted.status, minted.text).to.equal(200);
      const res = await withdraw({ "X-API-Key": TEST_API_KEY });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ amount: cost.toString(), to: owner.address });
      expect(await provider.getBalance(funded)).to.equal(0n);
    });
  });

  describe("POST /nft/deploy", function () {
    it("with only a privateKey answers 201 with the new contractAddress and owner = the caller", async function () {
      const deployer = new Wallet(DEV_KEYS[8]);
      const res = await api.post("/nft/deploy", { privateKey: deployer.privateKey });
      const receipt = await expectConfirmedWrite(res, provider, {
        status: 201,
        from: deployer.address,
        contractAddress: res.body.contractAddress ?? "0x0000000000000000000000000000000000000000",
        extra: ["owner"],
      });
      expect(res.body.contractAddress).to.equal(receipt.contractAddress);
      expect(res.body.owner).to.equal(deployer.address);
      const deployed = collectionAt(res.body.contractAddress, provider);
      expect(await deployed.owner()).to.equal(deployer.address);
      expect(await deployed.maxSupply()).to.equal(10_000n);
      expect(await deployed.maxMintAmountPerTx()).to.equal(10n);
      expect(await deployed.cost()).to.equal(DEFAULT_COST);
      expect(await deployed.totalSupply()).to.equal(0n);
    });

    it("with every field set deploys a collection with those values", async function () {
      const address = await deployThroughApi({
        name: "Custom",
        symbol: "CST",
        baseURI: "https://example.test/meta/",
        cost: 123,
        maxSupply: "7",
        maxMintAmountPerTx: 4,
      });
      const deployed = collectionAt(address, provider);
      expect(await deployed.name()).to.equal("Custom");
      expect(await deployed.symbol()).to.equal("CST");
      expect(await deployed.cost()).to.equal(123n);
      expect(await deployed.maxSupply()).to.equal(7n);
      expect(await deployed.maxMintAmountPerTx()).to.equal(4n);
      const minted = await mint(minter.privateKey, address, 1);
      const uri = await api.post("/nft/tokenURI", {
        privateKey: minter.privateKey,
        contractAddress: address,
        tokenId: minted.body.tokenIds[0],
      });
      expect(uri.body.tokenURI).to.equal("https://example.test/meta/1.json");
    });

    it("with a cost above 2^128 - 1 answers 422 CONTRACT_REVERTED (CostTooHigh) and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, owner.address, () =>
        api.post("/nft/deploy", { privateKey: owner.privateKey, cost: (2n ** 128n).toString() }),
      );
      const error = expectError(res, 422, "CONTRACT_REVERTED");
      expect(error.message).to.include("CostTooHigh");
    });

    it("with maxSupply 0 answers 400 VALIDATION_ERROR", async function () {
      expectError(
        await api.post("/nft/deploy", { privateKey: owner.privateKey, maxSupply: 0 }),
        400,
        "VALIDATION_ERROR",
      );
    });

    it("from a fresh key with no ether answers 402 INSUFFICIENT_FUNDS", async function () {
      const poor = freshWallet();
      const res = await expectNoGasSpent(provider, poor.address, () =>
        api.post("/nft/deploy", { privateKey: poor.privateKey }),
      );
      expectError(res, 402, "INSUFFICIENT_FUNDS");
    });
  });

  describe("max supply (a collection of 3, at most 2 per mint)", function () {
    let small: string;

    before(async function () {
      small = await deployThroughApi({ maxSupply: 3, maxMintAmountPerTx: 2 });
      const res = await mint(minter.privateKey, small, 2);
      expect(res.status, res.text).to.equal(200);
    });

    it("minting 2 when 1 is left answers 409 MAX_SUPPLY_EXCEEDED and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, minter.address, () => mint(minter.privateKey, small, 2));
      expectError(res, 409, "MAX_SUPPLY_EXCEEDED");
    });

    it("mintForFree of 2 when 1 is left answers 409 MAX_SUPPLY_EXCEEDED", async function () {
      const res = await expectNoGasSpent(provider, owner.address, () =>
        api.post("/nft/mintForFree", { privateKey: owner.privateKey, contractAddress: small, mintAmount: 2 }),
      );
      expectError(res, 409, "MAX_SUPPLY_EXCEEDED");
    });

    it("the last token can be minted, then total-supply answers 3 of 3 and any further mint is 409", async function () {
      const last = await mint(minter.privateKey, small, 1);
      expect(last.status, last.text).to.equal(200);
      expect(last.body.tokenIds).to.deep.equal(["3"]);
      const supply = await api.post("/nft/total-supply", { privateKey: minter.privateKey, contractAddress: small });
      expect(supply.body).to.deep.equal({
        totalSupply: "3",
        maxSupply: "3",
        wallet: { address: minter.address, tokenIds: ["1", "2", "3"] },
      });
      expectError(await mint(minter.privateKey, small, 1), 409, "MAX_SUPPLY_EXCEEDED");
    });
  });

  describe("an address that holds no ERC-721 collection", function () {
    let answers42: string;
    let reverts: string;

    before(async function () {
      const signer = rawDeployer.connect(provider);
      answers42 = await deployBytecode(signer, ANSWERS_42);
      reverts = await deployBytecode(signer, ALWAYS_REVERTS);
    });

    const calls: Array<[string, (contractAddress: string) => Promise<ApiResponse>, string]> = [
      [
        "tokenURI",
        (a) => api.post("/nft/tokenURI", { privateKey: owner.privateKey, contractAddress: a, tokenId: 1 }),
        owner.address,
      ],
      [
        "total-supply",
        (a) => api.post("/nft/total-supply", { privateKey: owner.privateKey, contractAddress: a }),
        owner.address,
      ],
      ["mint", (a) => mint(minter.privateKey, a, 1), minter.address],
      [
        "mintForFree",
        (a) => api.post("/nft/mintForFree", { privateKey: owner.privateKey, contractAddress: a, mintAmount: 1 }),
        owner.address,
      ],
      [
        "setPaused",
        (a) => api.post("/nft/setPaused", { privateKey: owner.privateKey, contractAddress: a, state: true }),
        owner.address,
      ],
      [
        "setCost",
        (a) => api.post("/nft/setCost", { privateKey: owner.privateKey, contractAddress: a, cost: "1" }),
        owner.address,
      ],
      [
        "addUserAddressToWhitelist",
        (a) =>
          api.post("/nft/addUserAddressToWhitelist", {
            privateKey: owner.privateKey,
            contractAddress: a,
            address: stranger.address,
          }),
        owner.address,
      ],
      [
        "withdraw",
        (a) =>
          api.post("/nft/withdraw", { privateKey: owner.privateKey, contractAddress: a }, { API_KEY: TEST_API_KEY }),
        owner.address,
      ],
    ];

    for (const [route, call, caller] of calls) {
      it(`${route} at an address without code (an EOA) answers 404 CONTRACT_NOT_FOUND and spends no gas`, async function () {
        const res = await expectNoGasSpent(provider, caller, () => call(receiver.address));
        expectError(res, 404, "CONTRACT_NOT_FOUND");
      });
    }

    for (const [route, call, caller] of calls) {
      it(`${route} at a contract that answers 42 to every call answers 422 UNSUPPORTED_CONTRACT and spends no gas`, async function () {
        const res = await expectNoGasSpent(provider, caller, () => call(answers42));
        expectError(res, 422, "UNSUPPORTED_CONTRACT");
      });
    }

    for (const [route, call, caller] of calls.slice(0, 3)) {
      it(`${route} at a contract without supportsInterface (reverts on every call) answers 422 UNSUPPORTED_CONTRACT`, async function () {
        const res = await expectNoGasSpent(provider, caller, () => call(reverts));
        expectError(res, 422, "UNSUPPORTED_CONTRACT");
      });
    }
  });

  describe("secrets", function () {
    it("no response body and no log line contains a private key or the API key used in the tests", function () {
      expectNoSecretsIn(api.responseTexts, shared.service.output());
    });
  });
});
