import { expect } from "chai";
import type { Contract, Wallet } from "ethers";
import { expectError } from "../expectations";
import { collectionAt, freshWallet } from "../harness";
import { describeSecrets, describeWithoutCollection, nftFixture } from "./fixture";

describe("POST /nft/total-supply", function () {
  const f = nftFixture();
  let minter: Wallet;
  let reference: Contract;

  const totalSupply = (privateKey: string, contractAddress: string) =>
    f.api.post("/nft/total-supply", { privateKey, contractAddress });

  before(async function () {
    minter = await f.fundedWallet();
    reference = collectionAt(f.collection, f.provider);
    const res = await f.mint(minter.privateKey, f.collection, 2);
    expect(res.status, res.text).to.equal(200);
  });

  it("answers totalSupply, maxSupply and wallet = walletOfOwner of the caller, as decimal strings", async function () {
    const res = await totalSupply(minter.privateKey, f.collection);
    expect(res.status, res.text).to.equal(200);
    const [supply, maxSupply, wallet] = await Promise.all([
      reference.totalSupply() as Promise<bigint>,
      reference.maxSupply() as Promise<bigint>,
      reference.walletOfOwner(minter.address) as Promise<bigint[]>,
    ]);
    expect(wallet.length).to.be.greaterThan(0);
    expect(res.body).to.deep.equal({
      totalSupply: supply.toString(),
      maxSupply: maxSupply.toString(),
      wallet: { address: minter.address, tokenIds: wallet.map(String) },
    });
    expect(maxSupply).to.equal(10_000n);
  });

  it("for a caller holding no token the wallet lists no ids, and a key with no ether may read", async function () {
    const nobody = freshWallet();
    const res = await totalSupply(nobody.privateKey, f.collection);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.wallet).to.deep.equal({ address: nobody.address, tokenIds: [] });
  });

  it("at an EOA answers 404 CONTRACT_NOT_FOUND", async function () {
    expectError(await totalSupply(minter.privateKey, freshWallet().address), 404, "CONTRACT_NOT_FOUND");
  });

  describeWithoutCollection(
    f,
    "total-supply",
    (a) => totalSupply(f.owner.privateKey, a),
    () => f.owner.address,
    { revertsEverywhere: true },
  );

  describeSecrets(f);
});
