/**
 * What a new user meets on a fresh `npm start` (the embedded chain), from issue 35: collections
 * read with their name, symbol and the chain's head; wallet labels in index reads; error messages
 * that say what to do; unknown body fields refused.
 */
import { expect } from "chai";
import { JsonRpcProvider } from "ethers";
import { DEFAULT_COLLECTION } from "../../server/chain/collection";
import { expectError } from "./expectations";
import { ApiClient, DEV_KEYS, ServiceProcess, TEST_API_KEY, sleep, type ApiResponse } from "./harness";

const AUTH = { Authorization: `Bearer ${TEST_API_KEY}` };

describe("a fresh npm start, as a new user meets it", function () {
  let service: ServiceProcess;
  let api: ApiClient;
  let chain: JsonRpcProvider;
  let reference: string;

  /** A request with the root key. */
  const asRoot = (method: string, pathname: string, json?: unknown): Promise<ApiResponse> =>
    api.request(method, pathname, { json, headers: AUTH });

  /** GET a collection, waiting (up to 10 s) for a deployment's registration, which follows its answer. */
  async function collection(address: string, query = ""): Promise<ApiResponse> {
    for (const deadline = Date.now() + 10_000; ; await sleep(100)) {
      const res = await api.get(`/collections/${address}${query}`);
      if (res.status !== 404 || Date.now() > deadline) return res;
    }
  }

  before(async function () {
    this.timeout(150_000);
    service = await ServiceProcess.start({ env: { API_KEY: TEST_API_KEY } });
    for (let i = 0; i < 300 && !/^\s+Contract\s/m.test(service.output()); i++) await sleep(100);
    reference = /^\s+Contract\s+(0x[0-9a-fA-F]{40})/m.exec(service.output())![1];
    api = new ApiClient(service.url);
    chain = new JsonRpcProvider(`http://127.0.0.1:${service.chainPort}`, 31337, {
      staticNetwork: true,
      cacheTimeout: -1,
    });
  });

  after(async function () {
    this.timeout(30_000);
    chain?.destroy();
    await service?.stop();
  });

  describe("GET /collections/{address}", function () {
    it("has the name and symbol of the reference collection and of one deployed through the API", async function () {
      const ref = await collection(reference);
      expect(ref.status, ref.text).to.equal(200);
      expect([ref.body.name, ref.body.symbol]).to.deep.equal([DEFAULT_COLLECTION.name, DEFAULT_COLLECTION.symbol]);

      const deployed = await api.post("/nft/deploy", {
        privateKey: DEV_KEYS[0],
        name: "Harbour Lights",
        symbol: "HBL",
      });
      expect(deployed.status, deployed.text).to.equal(201);
      const res = await collection(deployed.body.contractAddress, `?minBlock=${deployed.body.blockNumber}`);
      expect(res.status, res.text).to.equal(200);
      expect([res.body.name, res.body.symbol]).to.deep.equal(["Harbour Lights", "HBL"]);
    });

    it("has chainHead at the chain's head right after blocks are mined, not the indexer's last seen block", async function () {
      for (let i = 0; i < 3; i++) {
        await chain.send("hardhat_mine", ["0x5"]);
        const head = Number(await chain.send("eth_blockNumber", []));
        const res = await collection(reference);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.chainHead).to.equal(head);
      }
    });
  });

  describe("GET /collections/{address}/wallets/{owner}", function () {
    let treasury: string;
    let petty: string;

    before(async function () {
      this.timeout(30_000);
      treasury = (await asRoot("POST", "/wallets", { kind: "local", label: "treasury" })).body.address;
      petty = (await asRoot("POST", "/wallets", { kind: "local", label: "petty" })).body.address;
      expect(treasury).to.match(/^0x/);
      expect(petty).to.match(/^0x/);
    });

    it("takes the label of a wallet the key may use, as `from` does", async function () {
      const minted = await api.post("/nft/mintForFree", {
        privateKey: DEV_KEYS[0],
        contractAddress: reference,
        mintAmount: 2,
        receiver: treasury,
      });
      expect(minted.status, minted.text).to.equal(200);
      const res = await asRoot("GET", `/collections/${reference}/wallets/treasury?minBlock=${minted.body.blockNumber}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.owner).to.equal(treasury);
      expect(res.body.tokenIds).to.deep.equal(minted.body.tokenIds);
    });

    it("answers a label the key may not use exactly as an unknown one: 404 WALLET_NOT_FOUND, naming no address", async function () {
      const made = await asRoot("POST", "/access-keys", {
        name: "petty-reader",
        scopes: ["nft:read"],
        wallets: [petty],
      });
      expect(made.status, made.text).to.equal(201);
      const asPetty = (owner: string) =>
        api.request("GET", `/collections/${reference}/wallets/${owner}`, {
          headers: { Authorization: `Bearer ${made.body.key}` },
        });
      const own = await asPetty("petty");
      expect(own.status, own.text).to.equal(200);
      expect(own.body.owner).to.equal(petty);
      const forbidden = expectError(await asPetty("treasury"), 404, "WALLET_NOT_FOUND");
      const unknown = expectError(await asPetty("nosuchwallet"), 404, "WALLET_NOT_FOUND");
      expect(forbidden).to.deep.equal(unknown);
      expect(JSON.stringify(forbidden).toLowerCase()).to.not.include(treasury.toLowerCase().slice(2));
      expect(forbidden.message).to.include("label");
    });
  });
});
