import { expect } from "chai";
import type { Wallet } from "ethers";
import { expectError, expectNoGasSpent } from "../expectations";
import { freshWallet } from "../harness";
import { DEFAULT_BASE_URI, describeSecrets, describeWithoutCollection, nftFixture } from "./fixture";

describe("POST /nft/tokenURI", function () {
  const f = nftFixture();
  let minter: Wallet;
  let tokenId: string;

  const tokenURI = (body: Record<string, unknown>) => f.api.post("/nft/tokenURI", body);

  before(async function () {
    minter = await f.fundedWallet();
    const res = await f.mint(minter.privateKey, f.collection, 1);
    expect(res.status, res.text).to.equal(200);
    tokenId = res.body.tokenIds[0];
  });

  it("answers exactly {tokenId, tokenURI} with tokenURI = baseURI + id + '.json'", async function () {
    const res = await tokenURI({ privateKey: minter.privateKey, contractAddress: f.collection, tokenId });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ tokenId, tokenURI: `${DEFAULT_BASE_URI}${tokenId}.json` });
  });

  it("accepts tokenId as a JSON integer and answers it as a decimal string", async function () {
    const stranger = freshWallet();
    const res = await tokenURI({
      privateKey: stranger.privateKey,
      contractAddress: f.collection,
      tokenId: Number(tokenId),
    });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ tokenId, tokenURI: `${DEFAULT_BASE_URI}${tokenId}.json` });
  });

  it("is a read: the caller's nonce and balance do not change", async function () {
    const res = await expectNoGasSpent(f.provider, minter.address, () =>
      tokenURI({ privateKey: minter.privateKey, contractAddress: f.collection, tokenId }),
    );
    expect(res.status).to.equal(200);
  });

  for (const missing of ["0", "999999", `1${"0".repeat(76)}`]) {
    it(`tokenURI of token ${missing.length > 10 ? "10^76" : missing} (never minted) answers 404 TOKEN_NOT_FOUND`, async function () {
      const res = await tokenURI({ privateKey: minter.privateKey, contractAddress: f.collection, tokenId: missing });
      expectError(res, 404, "TOKEN_NOT_FOUND");
    });
  }

  it("a tokenId of 2^256 (no uint256) answers 400 VALIDATION_ERROR", async function () {
    const res = await tokenURI({
      privateKey: minter.privateKey,
      contractAddress: f.collection,
      tokenId: (2n ** 256n).toString(),
    });
    expectError(res, 400, "VALIDATION_ERROR");
  });

  it("tokenURI without tokenId answers 400 VALIDATION_ERROR", async function () {
    const res = await tokenURI({ privateKey: minter.privateKey, contractAddress: f.collection });
    expectError(res, 400, "VALIDATION_ERROR");
  });

  it("tokenURI at an EOA answers 404 CONTRACT_NOT_FOUND", async function () {
    const res = await tokenURI({ privateKey: minter.privateKey, contractAddress: freshWallet().address, tokenId });
    expectError(res, 404, "CONTRACT_NOT_FOUND");
  });

  describeWithoutCollection(
    f,
    "tokenURI",
    (a) => tokenURI({ privateKey: f.owner.privateKey, contractAddress: a, tokenId: 1 }),
    () => f.owner.address,
    { revertsEverywhere: true },
  );

  describeSecrets(f);
});
