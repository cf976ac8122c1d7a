import { expect } from "chai";
import type { Wallet } from "ethers";
import { expectError } from "../expectations";
import { TEST_API_KEY, deployDirectly, type JsonBody } from "../harness";
import { describeSecrets, nftFixture } from "./fixture";

const ROOT = { authorization: `Bearer ${TEST_API_KEY}` };

describe("GET /nft/operations", function () {
  const f = nftFixture();
  let minter: Wallet;
  let other: Wallet;
  /** A second collection of the file, minted on by `other`. */
  let second: string;
  /** The operationIds of the file's mints on `f.collection`, oldest first. */
  const mints: string[] = [];

  const list = (query: string, headers: Record<string, string> = ROOT) =>
    f.api.request("GET", `/nft/operations${query}`, { headers });

  async function newKey(grant: Record<string, unknown>): Promise<Record<string, string>> {
    const res = await f.api.post("/access-keys", { name: "list-test", ...grant }, ROOT);
    expect(res.status, res.text).to.equal(201);
    return { authorization: `Bearer ${res.body.key as string}` };
  }

  before(async function () {
    minter = await f.fundedWallet();
    other = await f.fundedWallet();
    second = await deployDirectly(other.connect(f.provider));
    for (let i = 0; i < 3; i++) {
      const res = await f.mint(minter.privateKey, f.collection, 1);
      expect(res.status, res.text).to.equal(200);
      mints.push(res.body.operationId as string);
    }
    const res = await f.mint(other.privateKey, second, 2);
    expect(res.status, res.text).to.equal(200);
  });

  it("without an access key answers 401 UNAUTHORIZED: a list names no operation, so its id is no proof", async function () {
    expectError(await f.api.get("/nft/operations"), 401, "UNAUTHORIZED");
  });

  it("answers the newest first, each exactly as GET /nft/operations/{id} shows it, with the chain's blockNumber", async function () {
    const res = await list(`?collection=${f.collection}`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.operations.map((op: JsonBody) => op.operationId)).to.deep.equal([...mints].reverse());
    for (const op of res.body.operations as JsonBody[]) {
      const one = await f.api.get(`/nft/operations/${op.operationId}`);
      expect(op).to.deep.equal(one.body);
    }
    expect(res.body.blockNumber).to.be.a("number");
    expect(res.body.blockNumber).to.be.at.least(res.body.operations[0].blockNumber);
    expect(res.body).not.to.have.property("cursor");
  });

  it("pages with limit and cursor: every operation once, in order, and no cursor after the last page", async function () {
    const first = await list(`?collection=${f.collection}&limit=2`);
    expect(first.body.operations.map((op: JsonBody) => op.operationId)).to.deep.equal([mints[2], mints[1]]);
    expect(first.body.cursor).to.be.a("string");
    const second = await list(`?collection=${f.collection}&limit=2&cursor=${first.body.cursor}`);
    expect(second.body.operations.map((op: JsonBody) => op.operationId)).to.deep.equal([mints[0]]);
    expect(second.body).not.to.have.property("cursor");
  });

  it("filters by wallet (the signer), collection and status", async function () {
    const byWallet = await list(`?wallet=${other.address}`);
    expect(byWallet.body.operations).to.have.length(1);
    expect(byWallet.body.operations[0]).to.include({ from: other.address, contractAddress: second });
    const byLowerCase = await list(`?wallet=${minter.address.toLowerCase()}&status=confirmed`);
    expect(byLowerCase.body.operations.map((op: JsonBody) => op.operationId)).to.deep.equal([...mints].reverse());
    expect((await list(`?wallet=${minter.address}&status=failed`)).body.operations).to.deep.equal([]);
    expect((await list(`?collection=${f.collection}&status=sent`)).body.operations).to.deep.equal([]);
  });

  it("shows a key limited to one collection only that collection's operations, as the single read does", async function () {
    // A deployment through the API on the shared service: not on the key's collection, so not shown.
    const deployed = await f.deployThroughApi();
    const limited = await newKey({ scopes: ["nft:read"], collections: [second] });
    const res = await list("", limited);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.operations.length).to.be.greaterThan(0);
    // No other collection's deployment, nor any nonce fill (it names no collection): only `second`.
    for (const op of res.body.operations as JsonBody[]) expect(op.contractAddress, JSON.stringify(op)).to.equal(second);
    expect((await list(`?collection=${f.collection}`, limited)).body.operations).to.deep.equal([]);
    const single = await f.api.request("GET", `/nft/operations/${mints[0]}`, { headers: limited });
    expectError(single, 404, "OPERATION_NOT_FOUND");
    // A deployment is on the collection it made: a key limited to that collection sees it, list and single.
    const ofDeployed = await newKey({ scopes: ["nft:read"], collections: [deployed] });
    const deploys = (await list("", ofDeployed)).body.operations as JsonBody[];
    expect(deploys.map((op) => [op.operation, op.contractAddress])).to.deep.equal([["deploy", deployed]]);
    const one = await f.api.request("GET", `/nft/operations/${deploys[0].operationId}`, { headers: ofDeployed });
    expect(one.status, one.text).to.equal(200);
    const notOne = await f.api.request("GET", `/nft/operations/${deploys[0].operationId}`, { headers: limited });
    expectError(notOne, 404, "OPERATION_NOT_FOUND");
  });

  it("shows a key limited to collections the deployments and nonce fills it made itself, and no one else's", async function () {
    const maker = await newKey({ scopes: ["nft:read", "nft:deploy"], collections: [second] });
    const res = await f.api.post("/nft/deploy", { privateKey: f.owner.privateKey }, maker);
    expect(res.status, res.text).to.equal(201);
    const seen = (await list("", maker)).body.operations as JsonBody[];
    expect(seen.map((op) => op.operationId)).to.include(res.body.operationId);
    for (const op of seen)
      if (op.operationId !== res.body.operationId) expect(op.contractAddress, JSON.stringify(op)).to.equal(second);
  });

  it("shows a key limited to a wallet only that wallet's operations, paged alike", async function () {
    const limited = await newKey({ scopes: ["nft:read"], wallets: [minter.address] });
    const res = await list(`?collection=${f.collection}`, limited);
    expect(res.body.operations.map((op: JsonBody) => op.operationId)).to.deep.equal([...mints].reverse());
    expect((await list(`?wallet=${other.address}`, limited)).body.operations).to.deep.equal([]);
    const first = await list(`?collection=${f.collection}&limit=2`, limited);
    const next = await list(`?collection=${f.collection}&limit=2&cursor=${first.body.cursor}`, limited);
    expect([...first.body.operations, ...next.body.operations].map((op: JsonBody) => op.operationId)).to.deep.equal(
      [...mints].reverse(),
    );
  });

  it("answers 403 FORBIDDEN naming nft:read to a key without it", async function () {
    const res = await list("", await newKey({ scopes: ["nft:mint"] }));
    expectError(res, 403, "FORBIDDEN");
    expect(res.body.error.message).to.include("nft:read");
  });

  it("answers 400 VALIDATION_ERROR to a cursor it did not give, a bad status, wallet or limit", async function () {
    expectError(await list("?cursor=bm90LWEtY3Vyc29y"), 400, "VALIDATION_ERROR");
    expectError(await list("?status=mined"), 400, "VALIDATION_ERROR");
    expectError(await list("?wallet=0x1234"), 400, "VALIDATION_ERROR");
    expectError(await list("?limit=501"), 400, "VALIDATION_ERROR");
  });

  describeSecrets(f);
});
