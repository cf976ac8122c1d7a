import { expect } from "chai";
import { parseEther, type Wallet } from "ethers";
import { expectConfirmedWrite, expectError, expectNoGasSpent } from "../expectations";
import { TEST_API_KEY } from "../harness";
import { describeSecrets, describeWithoutCollection, nftFixture } from "./fixture";

describe("POST /nft/withdraw", function () {
  const f = nftFixture({ collection: false });
  let funded: string;
  let minter: Wallet;
  let stranger: Wallet;
  const cost = parseEther("1");

  before(async function () {
    [minter, stranger] = await Promise.all([f.fundedWallet(), f.fundedWallet()]);
    funded = await f.deployThroughApi({ cost: cost.toString() });
    const res = await f.mint(minter.privateKey, funded, 2);
    expect(res.status, res.text).to.equal(200);
  });

  const withdraw = (headers: Record<string, string>, key: string = f.owner.privateKey, contractAddress = funded) =>
    f.api.post("/nft/withdraw", { privateKey: key, contractAddress }, headers);

  it("without an API key header answers 401 INVALID_API_KEY, sends nothing, and the contract keeps its ether", async function () {
    const res = await expectNoGasSpent(f.provider, f.owner.address, () => withdraw({}));
    expectError(res, 401, "INVALID_API_KEY");
    expect(await f.provider.getBalance(funded)).to.equal(cost * 2n);
  });

  it("with a wrong API_KEY answers 401 INVALID_API_KEY", async function () {
    const res = await expectNoGasSpent(f.provider, f.owner.address, () => withdraw({ API_KEY: `${TEST_API_KEY}x` }));
    expectError(res, 401, "INVALID_API_KEY");
  });

  it("with a wrong X-API-Key answers 401 INVALID_API_KEY", async function () {
    expectError(await withdraw({ "X-API-Key": "wrong" }), 401, "INVALID_API_KEY");
  });

  it("without an API key answers 401 INVALID_API_KEY even when the body is not JSON or fails validation (the key is checked first)", async function () {
    const notJson = await f.api.request("POST", "/nft/withdraw", { raw: `{"privateKey": "${f.owner.privateKey}", ` });
    expectError(notJson, 401, "INVALID_API_KEY");
    expectError(await f.api.post("/nft/withdraw", { contractAddress: "nope" }), 401, "INVALID_API_KEY");
    expectError(await f.api.request("POST", "/nft/withdraw", { raw: "x".repeat(150 * 1024) }), 401, "INVALID_API_KEY");
  });

  it("with the right API_KEY, a body that is not JSON answers 400 VALIDATION_ERROR", async function () {
    const res = await f.api.request("POST", "/nft/withdraw", {
      raw: `{"privateKey": "${f.owner.privateKey}", `,
      headers: { API_KEY: TEST_API_KEY },
    });
    expectError(res, 400, "VALIDATION_ERROR");
  });

  it("by an account that is not the owner, with the right API_KEY, answers 403 NOT_CONTRACT_OWNER and spends no gas", async function () {
    const res = await expectNoGasSpent(f.provider, stranger.address, () =>
      withdraw({ API_KEY: TEST_API_KEY }, stranger.privateKey),
    );
    expectError(res, 403, "NOT_CONTRACT_OWNER");
    expect(await f.provider.getBalance(funded)).to.equal(cost * 2n);
  });

  it("by the owner with the API_KEY header sends the whole balance to the owner: amount and to", async function () {
    const ownerBefore = await f.provider.getBalance(f.owner.address);
    const res = await withdraw({ API_KEY: TEST_API_KEY });
    const receipt = await expectConfirmedWrite(res, f.provider, {
      from: f.owner.address,
      contractAddress: funded,
      extra: ["amount", "to"],
    });
    expect(res.body.amount).to.equal((cost * 2n).toString());
    expect(res.body.to).to.equal(f.owner.address);
    expect(await f.provider.getBalance(funded)).to.equal(0n);
    const fee = receipt.gasUsed * receipt.gasPrice;
    expect(await f.provider.getBalance(f.owner.address)).to.equal(ownerBefore + cost * 2n - fee);
  });

  it("with an empty contract answers 409 NOTHING_TO_WITHDRAW and spends no gas", async function () {
    const res = await expectNoGasSpent(f.provider, f.owner.address, () => withdraw({ API_KEY: TEST_API_KEY }));
    expectError(res, 409, "NOTHING_TO_WITHDRAW");
  });

  it("accepts the key in an X-API-Key header too", async function () {
    const minted = await f.mint(minter.privateKey, funded, 1);
    expect(minted.status, minted.text).to.equal(200);
    const res = await withdraw({ "X-API-Key": TEST_API_KEY });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ amount: cost.toString(), to: f.owner.address });
    expect(await f.provider.getBalance(funded)).to.equal(0n);
  });

  describeWithoutCollection(
    f,
    "withdraw",
    (a) => withdraw({ API_KEY: TEST_API_KEY }, f.owner.privateKey, a),
    () => f.owner.address,
  );

  describeSecrets(f);
});
