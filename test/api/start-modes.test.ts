import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Contract, JsonRpcProvider, Wallet } from "ethers";
import { ApiClient, DEV_KEYS, freePort, ServiceProcess, sleep, TEST_API_KEY } from "./harness";

/** The value printed after `label` in the start banner. */
function bannerValue(output: string, label: string): string {
  const match = new RegExp(`^\\s+${label}\\s+(\\S+)`, "m").exec(output);
  if (!match) throw new Error(`banner has no ${label} line:\n${output}`);
  return match[1];
}

async function waitForBanner(service: ServiceProcess): Promise<string> {
  for (let i = 0; i < 300 && !/^\s+API_KEY\s/m.test(service.output()); i++) await sleep(100);
  return service.output();
}

describe("npm start with no configuration (embedded chain)", function () {
  let service: ServiceProcess;
  let banner: string;
  let api: ApiClient;

  before(async function () {
    this.timeout(150_000);
    service = await ServiceProcess.start({});
    banner = await waitForBanner(service);
    api = new ApiClient(service.url);
  });

  after(async function () {
    this.timeout(30_000);
    await service?.stop();
  });

  it("prints a banner with the API URL, RPC URL, chain id, contract, owner key and a random API_KEY", function () {
    expect(bannerValue(banner, "API")).to.equal(service.url);
    expect(bannerValue(banner, "RPC")).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(bannerValue(banner, "Chain id")).to.equal("31337");
    expect(bannerValue(banner, "Contract")).to.match(/^0x[0-9a-fA-F]{40}$/);
    expect(bannerValue(banner, "Owner key")).to.equal(DEV_KEYS[0]);
    expect(bannerValue(banner, "API_KEY")).to.have.length.greaterThanOrEqual(16);
    expect(service.output(), "the MCP SDK's start-up line").to.not.include("responseMode");
  });

  it("keeps its root API_KEY in $DATA_DIR/api.key (mode 0600) and says so in the banner", function () {
    const key = bannerValue(banner, "API_KEY");
    expect(banner).to.match(/API_KEY\s+\S+\s+\(made now, kept in \S+api\.key: the same at every start; set API_KEY/);
    const file = /kept in (\S+api\.key):/.exec(banner)![1];
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    expect(readFileSync(file, "utf8").trim()).to.equal(key);
  });

  it("lets a webhook reach loopback on the embedded dev chain, and the banner says so", async function () {
    expect(banner).to.match(/Webhooks\s+may reach loopback and private addresses\s+\(the embedded dev chain's default/);
    const created = await api.post(
      "/webhooks",
      { url: "http://127.0.0.1:46999/hooks", events: ["operation.confirmed"] },
      { Authorization: `Bearer ${bannerValue(banner, "API_KEY")}` },
    );
    expect(created.status, created.text).to.equal(201);
  });

  it("makes a wallet master key in $DATA_DIR/master.key (mode 0600), names the file in the banner, never prints the key", async function () {
    const file = bannerValue(banner, "Master key");
    expect(path.basename(file)).to.equal("master.key");
    expect(banner).to.match(/Master key\s+\S+\s+\(made now for this data directory;/);
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    const key = readFileSync(file, "utf8").trim();
    expect(key).to.match(/^[0-9a-f]{64}$/);
    expect(service.output()).to.not.include(key);
    const created = await api.post(
      "/wallets",
      { kind: "local", label: "dev" },
      { API_KEY: bannerValue(banner, "API_KEY") },
    );
    expect(created.status, created.text).to.equal(201);
  });

  it("serves the embedded chain as JSON-RPC on CHAIN_PORT", async function () {
    const provider = new JsonRpcProvider(bannerValue(banner, "RPC"), 31337, { staticNetwork: true });
    expect(await provider.getCode(bannerValue(banner, "Contract"))).to.not.equal("0x");
    provider.destroy();
  });

  it("deploys the test stablecoin TUSD (6 decimals, EIP-2612), names it in the banner and gives each dev account 1,000", async function () {
    expect(banner).to.match(
      /^\s+TUSD\s+0x[0-9a-fA-F]{40}\s+\(test stablecoin, 6 decimals, EIP-2612; dev chain only\)$/m,
    );
    const provider = new JsonRpcProvider(bannerValue(banner, "RPC"), 31337, { staticNetwork: true });
    const tusd = new Contract(
      bannerValue(banner, "TUSD"),
      [
        "function symbol() view returns (string)",
        "function decimals() view returns (uint8)",
        "function balanceOf(address) view returns (uint256)",
        "function nonces(address) view returns (uint256)",
      ],
      provider,
    );
    expect(await tusd.symbol()).to.equal("TUSD");
    expect(await tusd.decimals()).to.equal(6n);
    expect(await tusd.nonces(new Wallet(DEV_KEYS[0]).address)).to.equal(0n);
    const accounts = (await provider.send("eth_accounts", [])) as string[];
    expect(accounts).to.have.length(20);
    for (const account of accounts) expect(await tusd.balanceOf(account)).to.equal(1_000_000_000n);
    provider.destroy();
  });

  it("lets the banner's owner key mint and its API_KEY withdraw on the deployed collection", async function () {
    const contractAddress = bannerValue(banner, "Contract");
    const mint = await api.post("/nft/mint", { privateKey: DEV_KEYS[0], contractAddress, mintAmount: 2 });
    expect(mint.status).to.equal(200);
    expect(mint.body.tokenIds).to.deep.equal(["1", "2"]);
    const withdraw = await api.post(
      "/nft/withdraw",
      { privateKey: DEV_KEYS[0], contractAddress },
      { API_KEY: bannerValue(banner, "API_KEY") },
    );
    expect(withdraw.status).to.equal(200);
    expect(withdraw.body.amount).to.equal(mint.body.value);
  });

  it("serves /v2/user on the embedded store with no set-up", async function () {
    const created = await api.post("/v2/user/createWithList", [{ username: "embedded-alice", password: "s3cret!" }]);
    expect(created.status).to.equal(200);
    const login = await api.get("/v2/user/login?username=embedded-alice&password=s3cret!");
    expect(login.status).to.equal(200);
    expect(login.body).to.match(/^logged in user session:/);
  });
});

describe("npm start again on the same data directory (embedded chain)", function () {
  let dataDir: string;

  before(function () {
    dataDir = mkdtempSync(path.join(tmpdir(), "restart-root-key-"));
  });

  after(function () {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("keeps the root API_KEY (the reader's $API_KEY still works) unless API_KEY is set, which wins and is never written", async function () {
    this.timeout(360_000);
    const env = { DATA_DIR: dataDir };
    const keys: string[] = [];
    for (const round of [1, 2]) {
      const service = await ServiceProcess.start({ env });
      try {
        const banner = await waitForBanner(service);
        keys.push(bannerValue(banner, "API_KEY"));
        const made = round === 1 ? "made now, kept in" : "kept in";
        expect(banner, `start ${round}`).to.include(`(${made} ${path.join(dataDir, "api.key")}:`);
        const list = await new ApiClient(service.url).request("GET", "/access-keys", {
          headers: { Authorization: `Bearer ${keys[0]}` },
        });
        expect(list.status, `start ${round}: ${list.text}`).to.equal(200);
      } finally {
        await service.stop();
      }
    }
    expect(keys[1]).to.equal(keys[0]);

    const service = await ServiceProcess.start({ env: { ...env, API_KEY: TEST_API_KEY } });
    try {
      const banner = await waitForBanner(service);
      expect(bannerValue(banner, "API_KEY")).to.equal("(from");
      expect(banner).to.not.include(keys[0]);
      const api = new ApiClient(service.url);
      const kept = await api.request("GET", "/access-keys", { headers: { Authorization: `Bearer ${keys[0]}` } });
      expect(kept.status, "the kept key is not the root key while API_KEY is set").to.equal(401);
      const set = await api.request("GET", "/access-keys", { headers: { Authorization: `Bearer ${TEST_API_KEY}` } });
      expect(set.status, set.text).to.equal(200);
      expect(readFileSync(path.join(dataDir, "api.key"), "utf8").trim()).to.equal(keys[0]);
    } finally {
      await service.stop();
    }
  });
});

describe("DEMO_PORT", function () {
  let service: ServiceProcess;
  let demo: ApiClient;
  let api: ApiClient;

  before(async function () {
    this.timeout(150_000);
    const demoPort = await freePort();
    service = await ServiceProcess.start({ env: { DEMO_PORT: String(demoPort) } });
    await waitForBanner(service);
    api = new ApiClient(service.url);
    demo = new ApiClient(`http://127.0.0.1:${demoPort}`);
  });

  after(async function () {
    this.timeout(30_000);
    await service?.stop();
  });

  it("serves /v2/user on its own listener, and no longer on PORT", async function () {
    const created = await demo.post("/v2/user/createWithArray", [{ username: "demo-bob", password: "pw-bob-1" }]);
    expect(created.status).to.equal(200);
    expect((await demo.get("/v2/user/login?username=demo-bob&password=pw-bob-1")).status).to.equal(200);
    // Straight through fetch: a route the listener does not serve is no answer of the document's.
    const onApi = await fetch(`${api.baseUrl}/v2/user/login?username=demo-bob&password=pw-bob-1`);
    expect(onApi.status).to.equal(404);
    expect(((await onApi.json()) as { error: { code: string } }).error.code).to.equal("NOT_FOUND");
  });

  it("each listener's /openapi.json lists only its own routes; the demo listener has its own /docs", async function () {
    const paths = async (client: ApiClient) => {
      const res = await client.get("/openapi.json");
      expect(res.status, res.text).to.equal(200);
      return Object.keys(res.body.paths as object);
    };
    const onApi = await paths(api);
    expect(onApi).to.include.members(["/nft/mint", "/nft/operations/{operationId}", "/health", "/openapi.json"]);
    expect(onApi.filter((path) => path.startsWith("/v2/user"))).to.deep.equal([]);
    const onDemo = await paths(demo);
    expect(onDemo).to.include.members(["/v2/user", "/v2/user/login", "/v2/user/{username}"]);
    expect(onDemo.filter((path) => !path.startsWith("/v2/user"))).to.deep.equal(["/", "/openapi.json"]);
    const docs = await fetch(`${demo.baseUrl}/docs`);
    expect(docs.status).to.equal(200);
    expect(await docs.text()).to.include('url: "/openapi.json"');
  });

  it("keeps /nft and /health off the demo listener", async function () {
    expect((await fetch(`${demo.baseUrl}/health`)).status).to.equal(404); // not through the document's check: see above
    expect((await api.get("/health")).status).to.equal(200);
  });
});
