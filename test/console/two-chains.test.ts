/**
 * The console with two chains (issue 53), in headless Chromium against a service serving two
 * `hardhat node`s, signed in with the root key: Collections has a chain selector and its first load
 * asks nothing that answers 400; Wallets lists the wallet held; "Reflects block …" fills on every
 * view; the access-key form takes a `chains` limit.
 */
import { expect } from "chai";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import type { JsonRpcProvider } from "ethers";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import {
  ApiClient,
  ChainNode,
  ServiceProcess,
  TEST_API_KEY,
  deployDirectly,
  directProvider,
  fundedWallet,
} from "../api/harness";
import { DEFAULT_COLLECTION } from "../../server/chain/collection";

const CHROMIUM = "/usr/bin/chromium";
const ROOT = { authorization: `Bearer ${TEST_API_KEY}` };
const ALPHA = 31_411;
const BETA = 31_412;

describe("the console with two chains, in headless Chromium", function () {
  this.timeout(120_000);
  let nodes: ChainNode[] = [];
  let providers: JsonRpcProvider[] = [];
  let service: ServiceProcess;
  let api: ApiClient;
  let collection: string;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  const refused: string[] = [];
  const pageErrors: string[] = [];

  async function show(view: string): Promise<void> {
    await page.click(`nav button[data-view="${view}"]`);
    await page.waitForSelector("[data-block]:not([data-block=''])", { timeout: 15_000 });
  }

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.log(`    (skipped: no Chromium at ${CHROMIUM})`);
      this.skip();
    }
    this.timeout(240_000);
    nodes = await Promise.all([ChainNode.start(undefined, ALPHA), ChainNode.start(undefined, BETA)]);
    providers = [directProvider(nodes[0].rpcUrl, ALPHA), directProvider(nodes[1].rpcUrl, BETA)];
    // A collection on beta only: the console must ask beta for it.
    collection = await deployDirectly((await fundedWallet(providers[1])).connect(providers[1]));
    service = await ServiceProcess.start({
      chains: [
        { id: ALPHA, name: "alpha", rpcUrls: [nodes[0].rpcUrl] },
        { id: BETA, name: "beta", rpcUrls: [nodes[1].rpcUrl] },
      ],
      env: { WALLET_MASTER_KEY: randomBytes(32).toString("hex") },
    });
    api = new ApiClient(service.url);
    const held = await api.post("/wallets", { kind: "local", label: "shop" }, ROOT);
    expect(held.status, held.text).to.equal(201);
    const registered = await api.post("/collections", { chain: "beta", address: collection, fromBlock: 0 }, ROOT);
    expect(registered.status, registered.text).to.be.oneOf([200, 201]);
    userDataDir = mkdtempSync(path.join(tmpdir(), "console-chromium-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 800 },
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on("response", (response) => {
      if (response.status() === 400) refused.push(`${response.status()} ${response.url()}`);
    });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${service.url}/console`);
    await page.getByLabel("Access key").fill(TEST_API_KEY);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForSelector("h2:has-text('Operations')");
  });

  after(async function () {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    for (const provider of providers) provider.destroy();
    await service?.stop();
    await Promise.all(nodes.map((node) => node.stop()));
  });

  it("Wallets lists the wallet held, with a chain selector, and reflects a block", async function () {
    await show("wallets");
    await page.waitForSelector("td:has-text('shop')", { timeout: 10_000 });
    const options = await page.locator("select[name=chain] option").allTextContents();
    expect(options).to.deep.equal([`alpha (${ALPHA})`, `beta (${BETA})`]);
  });

  it("Access keys and Jobs reflect a block; the key form takes a chains limit", async function () {
    await show("access-keys");
    await page.fill("input[name=name]", "beta-reader");
    await page.fill("input[name=chains]", "beta");
    await page.locator("input[name=scopes][value='nft:read']").check();
    await page.getByRole("button", { name: "Create key" }).click();
    await page.waitForSelector("td:has-text('beta-reader')", { timeout: 10_000 });
    const keys = await api.request("GET", "/access-keys", { headers: ROOT });
    const made = keys.body.accessKeys.find((k: { name: string }) => k.name === "beta-reader");
    expect(made.chains).to.deep.equal([String(BETA)]);
    await show("jobs");
  });

  it("Collections: its first load asks nothing that answers 400; a chain picked, the collection on it shows", async function () {
    await show("collections");
    await page.selectOption("select[name=chain]", String(BETA));
    // The view has read beta (a later render would clear an address typed before it).
    await page.waitForSelector(`section[data-chain="${BETA}"]`, { timeout: 10_000 });
    await page.fill("input[name=address]", collection);
    await page.getByRole("button", { name: "Show" }).click();
    const name = page.locator("[data-collection-name]");
    await name.waitFor({ timeout: 15_000 });
    expect(await name.textContent()).to.equal(DEFAULT_COLLECTION.name);
    expect(await page.getAttribute("[data-block]", "data-block")).to.match(/^\d+$/);
    expect(refused, "requests answered 400").to.deep.equal([]);
    expect(pageErrors).to.deep.equal([]);
  });
});
