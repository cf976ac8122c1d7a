/**
 * What a new user meets on a fresh `npm start` (the embedded chain), from issue 35: collections
 * read with their name, symbol and the chain's head; wallet labels in index reads; error messages
 * that say what to do; unknown body fields refused.
 */
import { expect } from "chai";
import { JsonRpcProvider, Wallet } from "ethers";
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

  describe("POST /collections", function () {
    it("of a collection just deployed answers its name and symbol, the first time as the next", async function () {
      const deployed = await api.post("/nft/deploy", { privateKey: DEV_KEYS[0], name: "Tide Tables", symbol: "TIDE" });
      expect(deployed.status, deployed.text).to.equal(201);
      for (const round of ["first", "repeat"]) {
        const res = await asRoot("POST", "/collections", { address: deployed.body.contractAddress });
        expect(res.status, `${round}: ${res.text}`).to.be.oneOf([200, 201]);
        expect([res.body.name, res.body.symbol], round).to.deep.equal(["Tide Tables", "TIDE"]);
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

  describe("error messages that say what to do", function () {
    it("a `from` mint by an unfunded wallet is 402 naming its address, what it needs, and how to fund it on the embedded chain", async function () {
      const wallet = (await asRoot("POST", "/wallets", { kind: "local", label: "unfunded" })).body.address as string;
      const mint = () => asRoot("POST", "/nft/mint", { from: "unfunded", contractAddress: reference, mintAmount: 1 });
      const error = expectError(await mint(), 402, "INSUFFICIENT_FUNDS");
      expect(error.message).to.include(wallet);
      const needed = /needs (\d+) wei/.exec(error.message);
      expect(needed, error.message).to.not.equal(null);
      expect(BigInt(needed![1]) > DEFAULT_COLLECTION.cost, "the value and the gas").to.equal(true);
      // The hint is a command that works: the JSON-RPC call it names funds the wallet on CHAIN_PORT.
      const hint = /curl -s (http:\/\/127\.0\.0\.1:(\d+)) .* -d '(\{.*"hardhat_setBalance".*\})'/.exec(error.message);
      expect(hint, error.message).to.not.equal(null);
      expect(Number(hint![2])).to.equal(service.chainPort);
      const funded = await fetch(hint![1], {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: hint![3],
      });
      expect(((await funded.json()) as { result?: unknown }).result).to.equal(true);
      const again = await mint();
      expect(again.status, again.text).to.equal(200);
    });

    it("NOT_CONTRACT_OWNER says in the API's words who owns the collection and who asked, not the contract's revert", async function () {
      const owner = new Wallet(DEV_KEYS[0]).address;
      const stranger = new Wallet(DEV_KEYS[3]).address;
      const calls: Array<[string, Record<string, unknown>]> = [
        ["/nft/mintForFree", { mintAmount: 1 }],
        ["/nft/setPaused", { state: true }],
        ["/nft/setCost", { cost: "1" }],
      ];
      for (const [route, fields] of calls) {
        const res = await api.post(route, { privateKey: DEV_KEYS[3], contractAddress: reference, ...fields });
        const error = expectError(res, 403, "NOT_CONTRACT_OWNER");
        expect(error.message, route).to.not.match(/OwnableUnauthorizedAccount|account=/);
        expect(error.message, route).to.include(owner).and.include(stranger).and.include(reference);
      }
    });
  });

  describe("unknown body fields", function () {
    it("are 400 VALIDATION_ERROR naming the field on /nft, /wallets, /access-keys, /webhooks and /collections, and nothing is done", async function () {
      const wallet = (await asRoot("POST", "/wallets", { kind: "local", label: "colourless" })).body.address as string;
      const supply = await api.post("/nft/total-supply", { privateKey: DEV_KEYS[0], contractAddress: reference });
      const calls: Array<[string, string, Record<string, unknown>]> = [
        ["POST", "/nft/deploy", { privateKey: DEV_KEYS[0], name: "Paint", symbol: "PNT" }],
        ["POST", "/nft/mintForFree", { privateKey: DEV_KEYS[0], contractAddress: reference, mintAmount: 1 }],
        ["POST", "/nft/total-supply", { privateKey: DEV_KEYS[0], contractAddress: reference }],
        ["POST", "/wallets", { kind: "local", label: "painted" }],
        ["PATCH", `/wallets/${wallet}`, { label: "repainted" }],
        ["POST", "/access-keys", { name: "painter", scopes: ["nft:read"] }],
        ["POST", "/webhooks", { url: "https://hooks.example.com/nft", events: ["operation.confirmed"] }],
        ["POST", "/collections", { address: reference }],
      ];
      for (const [method, route, fields] of calls) {
        const error = expectError(await asRoot(method, route, { ...fields, colour: "blue" }), 400, "VALIDATION_ERROR");
        expect(error.details, `${method} ${route}`).to.deep.equal([
          { path: "colour", message: error.details[0].message },
        ]);
        expect(error.message, `${method} ${route}`).to.include("colour").and.include("unknown field");
      }
      const after = await api.post("/nft/total-supply", { privateKey: DEV_KEYS[0], contractAddress: reference });
      expect(after.body.totalSupply, "nothing minted").to.equal(supply.body.totalSupply);
      const wallets = await asRoot("GET", "/wallets");
      expect(wallets.text).to.not.include("painted");
    });

    it("the demo users keep Petstore's leniency", async function () {
      const res = await api.post("/v2/user", { username: "lenient", firstName: "Lee", colour: "blue" });
      expect(res.status, res.text).to.equal(200);
      const user = await api.get("/v2/user/lenient");
      expect(user.body.firstName).to.equal("Lee");
    });
  });

  describe("a body that is not JSON", function () {
    it("sent as curl -d sends it (form-encoded) is 400 naming the Content-Type header, not a missing field", async function () {
      const body = JSON.stringify({ privateKey: DEV_KEYS[0], contractAddress: reference, mintAmount: 1 });
      for (const type of ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
        const res = await api.request("POST", "/nft/mint", { raw: body, headers: { "content-type": type } });
        const error = expectError(res, 400, "VALIDATION_ERROR");
        expect(error.message, type).to.include("Content-Type: application/json");
        expect(error.details, type).to.deep.equal([
          { path: "(header) Content-Type", message: "expected application/json" },
        ]);
        expect(res.text, type).to.not.include("contractAddress");
      }
    });

    it("that is not valid JSON is 400 VALIDATION_ERROR giving the position, and never quoting the body", async function () {
      const raw = `{"privateKey":"${DEV_KEYS[0]}",\n "mintAmount": 1,}`;
      const error = expectError(await api.request("POST", "/nft/mint", { raw }), 400, "VALIDATION_ERROR");
      const position = raw.indexOf("}");
      expect(error.message).to.include(`at position ${position} (line 2, column ${position - raw.indexOf("\n")})`);
      expect(error.message.toLowerCase()).to.not.include(DEV_KEYS[0].slice(2).toLowerCase());
    });

    it("the demo users still read JSON sent with no Content-Type or as text/plain", async function () {
      for (const [name, type] of [
        ["untyped", ""],
        ["plain", "text/plain"],
      ]) {
        const headers: Record<string, string> = type ? { "content-type": type } : {};
        const raw = JSON.stringify({ username: name, firstName: "Pat" });
        const res = await fetch(`${api.baseUrl}/v2/user`, {
          method: "POST",
          headers,
          body: new Blob([raw]), // a Blob with no type: fetch sends no Content-Type
        });
        expect(res.status, `${name}: ${await res.text()}`).to.equal(200);
        expect((await api.get(`/v2/user/${name}`)).body.firstName, name).to.equal("Pat");
      }
    });
  });
});
