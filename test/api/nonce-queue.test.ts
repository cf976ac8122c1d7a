import { expect } from "chai";
import { Wallet, isError, type JsonRpcProvider } from "ethers";
import { expectError, expectNoSecretsIn } from "./expectations";
import { DEV_KEYS, collectionAt, type ApiClient } from "./harness";
import { sharedService, type SharedService } from "./shared-service";

describe("many writes from one key", function () {
  let shared: SharedService;
  let api: ApiClient;
  let provider: JsonRpcProvider;
  let collection: string;

  const busy = new Wallet(DEV_KEYS[3]);
  const sharedKeyHolder = new Wallet(DEV_KEYS[4]);

  before(async function () {
    this.timeout(150_000);
    shared = await sharedService();
    ({ api, provider, collection } = shared);
  });

  /** A 1-wei self-transfer sent straight to the node; retried if it races the service for a nonce. */
  async function sendDirectly(wallet: Wallet): Promise<void> {
    const signer = wallet.connect(provider);
    for (let attempt = 1; ; attempt++) {
      try {
        await (await signer.sendTransaction({ to: signer.address, value: 1n })).wait();
        return;
      } catch (err) {
        if (attempt >= 5 || !(isError(err, "NONCE_EXPIRED") || /nonce/i.test(String(err)))) throw err;
      }
    }
  }

  const mint = (key: string, mintAmount: unknown) =>
    api.post("/nft/mint", { privateKey: key, contractAddress: collection, mintAmount });

  it("32 concurrent mints from one key all answer 200 with distinct transactions and token ids; the nonce advances by exactly 32", async function () {
    this.timeout(120_000);
    const mintAmount = 2;
    const nonceBefore = await provider.getTransactionCount(busy.address);
    const responses = await Promise.all(Array.from({ length: 32 }, () => mint(busy.privateKey, mintAmount)));

    const failures = responses.filter((res) => res.status !== 200).map((res) => `${res.status} ${res.text}`);
    expect(failures, "non-200 answers").to.deep.equal([]);
    const hashes = responses.map((res) => res.body.transactionHash as string);
    expect(new Set(hashes).size, "distinct transaction hashes").to.equal(32);
    const tokenIds = responses.flatMap((res) => res.body.tokenIds as string[]);
    expect(tokenIds).to.have.length(32 * mintAmount);
    expect(new Set(tokenIds).size, "distinct token ids").to.equal(32 * mintAmount);
    expect(await provider.getTransactionCount(busy.address)).to.equal(nonceBefore + 32);

    const wallet: bigint[] = await collectionAt(collection, provider).walletOfOwner(busy.address);
    const owned = new Set(wallet.map(String));
    for (const id of tokenIds) expect(owned.has(id), `token ${id} belongs to the caller`).to.equal(true);
  });

  /** eth_sendRawTransaction calls the service has made, from its /metrics. */
  const sends = async () =>
    Number(
      (await api.get("/metrics")).text.match(
        /rpc_calls_total\{method="eth_sendRawTransaction",chain="31337"\} (\d+)/,
      )?.[1] ?? 0,
    );

  it("200 mints from 16 clients at a time on one key (an automining node refuses nonce gaps) all answer 200; the nonce advances by exactly 200, about one broadcast each", async function () {
    this.timeout(180_000);
    const nonceBefore = await provider.getTransactionCount(busy.address);
    const sendsBefore = await sends();
    const statuses: Record<number, number> = {};
    let started = 0;
    const client = async () => {
      while (started++ < 200) {
        const res = await mint(busy.privateKey, 1);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: 16 }, client));
    expect(statuses).to.deep.equal({ 200: 200 });
    expect(await provider.getTransactionCount(busy.address)).to.equal(nonceBefore + 200);
    // Sent together, a hardhat node takes a batch in any order and refused most as gaps: 2 sends a mint.
    expect(await sends(), "eth_sendRawTransaction calls").to.be.at.most(sendsBefore + 220);
  });

  it("a failing mint (mintAmount 0) sent together with a good one from the same key: 422 for the first, 200 for the second", async function () {
    const nonceBefore = await provider.getTransactionCount(busy.address);
    const failing = mint(busy.privateKey, 0);
    const good = mint(busy.privateKey, 1);
    const [failed, succeeded] = await Promise.all([failing, good]);
    expectError(failed, 422, "INVALID_MINT_AMOUNT");
    expect(succeeded.status, succeeded.text).to.equal(200);
    expect(await provider.getTransactionCount(busy.address)).to.equal(nonceBefore + 1);
  });

  it("a failing mint followed at once by a good one, in sequence, both answer as they should", async function () {
    expectError(await mint(busy.privateKey, "11"), 422, "INVALID_MINT_AMOUNT");
    const res = await mint(busy.privateKey, 1);
    expect(res.status, res.text).to.equal(200);
  });

  it("a transaction sent outside the service from the same key does not jam it: the next mint through the API succeeds", async function () {
    // The service has used this key, so it holds a nonce for it.
    const warmup = await mint(sharedKeyHolder.privateKey, 1);
    expect(warmup.status, warmup.text).to.equal(200);

    await sendDirectly(sharedKeyHolder);
    await sendDirectly(sharedKeyHolder);
    const nonceBefore = await provider.getTransactionCount(sharedKeyHolder.address);

    const res = await mint(sharedKeyHolder.privateKey, 1);
    expect(res.status, res.text).to.equal(200);
    expect(await provider.getTransactionCount(sharedKeyHolder.address)).to.equal(nonceBefore + 1);
    const again = await mint(sharedKeyHolder.privateKey, 1);
    expect(again.status, again.text).to.equal(200);
  });

  it("mints through the API interleaved with direct transactions from the same key all succeed", async function () {
    const nonceBefore = await provider.getTransactionCount(sharedKeyHolder.address);
    const viaApi = Promise.all(Array.from({ length: 4 }, () => mint(sharedKeyHolder.privateKey, 1)));
    await sendDirectly(sharedKeyHolder);
    const responses = await viaApi;
    expect(responses.map((res) => `${res.status} ${res.status === 200 ? "" : res.text}`)).to.deep.equal(
      Array(4).fill("200 "),
    );
    expect(await provider.getTransactionCount(sharedKeyHolder.address)).to.equal(nonceBefore + 5);
  });

  describe("secrets", function () {
    it("no response body and no log line contains a private key or the API key used in the tests", function () {
      expectNoSecretsIn(api.responseTexts, shared.service.output());
    });
  });
});
