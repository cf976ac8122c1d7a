/**
 * The console in a real headless Chromium (Debian's, driven by playwright-core) against a real
 * service on a `hardhat node`: one service, one browser, every flow in turn. Screenshots of each
 * view (1280x800) go to test/console/screenshots/ (not committed).
 */
import { expect } from "chai";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import { Contract, Wallet, type JsonRpcProvider } from "ethers";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import {
  ApiClient,
  ChainNode,
  ServiceProcess,
  TEST_API_KEY,
  deployWithScript,
  directProvider,
  freshWallet,
  fundedWallet,
  leakedSecrets,
  sleep,
  usedSecrets,
} from "../api/harness";
import { DEFAULT_COLLECTION, collectionArtifact, deployTransaction } from "../../server/chain/collection";
import { Receiver } from "../webhooks/receiver";
import { deployEditionsDirectly } from "../collections/editions-fixture";

const CHROMIUM = "/usr/bin/chromium";
const SCREENSHOTS = path.join(__dirname, "screenshots");
const ROOT = { authorization: `Bearer ${TEST_API_KEY}` };
const HOSTILE_NAME = "<img src=x onerror=alert(1)>";
const VIEWS = [
  "operations",
  "approvals",
  "wallets",
  "access-keys",
  "audit-events",
  "webhooks",
  "collections",
  "jobs",
] as const;

describe("the console (/console) in headless Chromium", function () {
  this.timeout(120_000);
  let node: ChainNode;
  let service: ServiceProcess;
  let api: ApiClient;
  let provider: JsonRpcProvider;
  let collection: string;
  let minter: Wallet;
  let receiver: Receiver;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  /** The operator's key: scoped, not the root key. */
  let operatorKey: string;
  const dialogs: string[] = [];
  const consoleMessages: string[] = [];
  const pageErrors: string[] = [];

  async function newKey(scopes: string[], as: Record<string, string> = ROOT): Promise<string> {
    const res = await api.post("/access-keys", { name: `console-${scopes.length}`, scopes }, as);
    expect(res.status, res.text).to.equal(201);
    usedSecrets.add(res.body.key);
    return res.body.key as string;
  }

  /** Opens the console signed out (this tab's sessionStorage emptied), and signs in with `key`. */
  async function signIn(key: string): Promise<void> {
    await page.goto(`${service.url}/console`);
    await page.evaluate("sessionStorage.clear()");
    await page.reload();
    await page.getByLabel("Access key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
  }

  async function show(view: (typeof VIEWS)[number]): Promise<void> {
    await page.click(`nav button[data-view="${view}"]`);
    await page.waitForSelector("[data-block]:not([data-block=''])", { timeout: 10_000 });
  }

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.log(`    (skipped: no Chromium at ${CHROMIUM}; scripts/ensure-test-tools.sh could not install it)`);
      this.skip();
    }
    this.timeout(240_000);
    node = await ChainNode.start();
    const [deployed, started] = await Promise.all([
      deployWithScript(node.rpcUrl),
      ServiceProcess.start({
        rpcUrl: node.rpcUrl,
        env: {
          TX_TIMEOUT_MS: "1000",
          WEBHOOK_ALLOW_PRIVATE: "true",
          WALLET_MASTER_KEY: randomBytes(32).toString("hex"),
        },
      }),
    ]);
    collection = deployed;
    service = started;
    api = new ApiClient(service.url);
    provider = directProvider(node.rpcUrl);
    minter = await fundedWallet(provider);
    receiver = await Receiver.start(() => 500);
    operatorKey = await newKey([
      "nft:read",
      "wallets:read",
      "wallets:manage",
      "access-keys:manage",
      "webhooks:manage",
      "approvals:decide",
    ]);
    mkdirSync(SCREENSHOTS, { recursive: true });
    userDataDir = mkdtempSync(path.join(tmpdir(), "console-chromium-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 800 },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on("console", (message) => consoleMessages.push(message.text()));
    page.on("pageerror", (error) => pageErrors.push(error.message));
  });

  after(async function () {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await receiver?.close();
    provider?.destroy();
    await service?.stop();
    await node?.stop();
  });

  it("first load, everything fetched included, is at most 300 kB, served with a CSP that forbids inline script and framing", async function () {
    const sizes: Array<{ url: string; bytes: number }> = [];
    const failed: string[] = [];
    const counting = async (response: import("playwright-core").Response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
      const body = await response.body().catch(() => Buffer.alloc(0));
      sizes.push({ url: response.url(), bytes: body.length });
    };
    page.on("response", counting);
    const res = await page.goto(`${service.url}/console`);
    const csp = res!.headers()["content-security-policy"];
    expect(csp).to.include("script-src 'self'").and.include("frame-ancestors 'none'");
    expect(csp).not.to.include("unsafe-inline");
    // A fresh tab: nothing in sessionStorage, so the sign-in form, then the first view.
    await page.getByLabel("Access key").fill(operatorKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForSelector("[data-block]:not([data-block=''])").catch(async (err) => {
      await page.screenshot({ path: path.join(SCREENSHOTS, "first-load-failure.png") });
      throw err;
    });
    await sleep(300);
    page.off("response", counting);
    const total = sizes.reduce((sum, s) => sum + s.bytes, 0);
    console.log(`    first load: ${(total / 1000).toFixed(1)} kB uncompressed in ${sizes.length} responses`);
    expect(
      sizes.every((s) => s.url.startsWith(service.url)),
      "nothing fetched from elsewhere",
    ).to.equal(true);
    expect(total).to.be.at.most(300_000);
    // No failed request in the log: the page declares its icon (a browser asks /favicon.ico otherwise).
    expect(failed).to.deep.equal([]);
    const icon = await page.getAttribute("link[rel=icon]", "href");
    expect(icon, "an icon declared in the page").to.be.a("string");
    const served = await fetch(new URL(icon!, service.url));
    expect(served.status).to.equal(200);
    expect(served.headers.get("content-type")).to.match(/^image\//);
  });

  it("signs in with a scoped key kept in sessionStorage only, never in the URL or localStorage", async function () {
    await signIn(operatorKey);
    await page.waitForSelector("h2:has-text('Operations')");
    expect(page.url()).not.to.include(operatorKey);
    const stored = (await page.evaluate(
      "({ session: Object.values(sessionStorage), local: Object.keys(localStorage).length })",
    )) as { session: string[]; local: number };
    expect(stored.session).to.include(operatorKey);
    expect(stored.local).to.equal(0);
  });

  it("is usable from the keyboard alone: sign in, then Tab to a view and open it with Enter", async function () {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForSelector("input[name=key]:focus");
    await page.keyboard.type(operatorKey);
    await page.keyboard.press("Enter");
    await page.waitForSelector("h2:has-text('Operations')");
    let focused = "";
    for (let tabs = 0; tabs < 12 && focused !== "Wallets"; tabs++) {
      await page.keyboard.press("Tab");
      focused = String(await page.evaluate("document.activeElement.textContent.trim()"));
    }
    expect(focused).to.equal("Wallets");
    await page.keyboard.press("Enter");
    await page.waitForSelector("h2:has-text('Wallets'):focus");
  });

  it("a mint made over HTTP appears in Operations within 2 s with its chain, and its status turns confirmed", async function () {
    await signIn(operatorKey);
    await show("operations");
    await provider.send("evm_setAutomine", [false]);
    let operationId: string;
    try {
      const res = await api.post("/nft/mint", {
        privateKey: minter.privateKey,
        contractAddress: collection,
        mintAmount: 1,
      });
      expect(res.status, res.text).to.equal(202);
      operationId = res.body.operationId as string;
      const answered = Date.now();
      await page.waitForSelector(`tr[data-operation-id="${operationId}"]`, { timeout: 2_000 });
      console.log(`    the mint appeared ${Date.now() - answered} ms after its 202`);
      expect(await page.getAttribute(`tr[data-operation-id="${operationId}"] [data-status]`, "data-status")).to.equal(
        "sent",
      );
      // Issue 43: a chain column, and a chain selector listing the chains the service serves.
      expect(await page.getAttribute(`tr[data-operation-id="${operationId}"] [data-chain]`, "data-chain")).to.equal(
        "31337",
      );
      const chains = await page.locator('select[name="chain"] option').allTextContents();
      expect(chains.join("|")).to.match(/^any\|[a-z0-9-]+ \(31337\)$/);
    } finally {
      await provider.send("evm_setAutomine", [true]);
    }
    await provider.send("evm_mine", []);
    await page.waitForSelector(`tr[data-operation-id="${operationId}"] [data-status="confirmed"]`, { timeout: 15_000 });
    await page.screenshot({ path: path.join(SCREENSHOTS, "operations.png") });
  });

  it("creates a key: its secret is shown once, with a copy button, and is gone on reload", async function () {
    await signIn(operatorKey);
    await show("access-keys");
    await page.getByLabel("Name").fill("made-in-console");
    await page.getByLabel("nft:read").check();
    await page.getByRole("button", { name: "Create key" }).click();
    const secretInput = page.locator("[data-secret]");
    await secretInput.waitFor();
    const secret = await secretInput.inputValue();
    usedSecrets.add(secret);
    expect(secret).to.match(/^nfto_/);
    expect(await page.getByRole("button", { name: "Copy secret" }).count()).to.equal(1);
    // The secret masked: a screenshot may be committed, and secret scanners look for nfto_.
    await page.screenshot({ path: path.join(SCREENSHOTS, "access-keys.png"), mask: [secretInput] });
    await page.reload();
    await show("access-keys");
    await page.waitForSelector("td:has-text('made-in-console')");
    expect(await page.locator("[data-secret]").count()).to.equal(0);
    expect(await page.content()).not.to.include(secret);
    const stored = (await page.evaluate(
      "[...Object.values(sessionStorage), ...Object.values(localStorage)]",
    )) as string[];
    expect(stored).not.to.include(secret);

    // Revoked in the console, the key signs in no more.
    await page.getByRole("button", { name: "Revoke made-in-console" }).click();
    await page.getByRole("button", { name: "Confirm revoking made-in-console" }).click();
    await page.waitForSelector("td:has-text('made-in-console')", { state: "detached" });
    await page.getByRole("button", { name: "Sign out" }).click();
    await signIn(secret);
    await page.waitForSelector("[role=alert]:has-text('UNAUTHORIZED')");
    expect(await page.getByLabel("Access key").count()).to.equal(1);
  });

  it("creates a wallet and imports a key from the Wallets view; the key leaves the page", async function () {
    await signIn(operatorKey);
    await show("wallets");
    await page.getByLabel("Label").fill("treasury");
    await page.getByRole("button", { name: "Create wallet" }).click();
    await page.waitForSelector("td:text-is('treasury')");
    const imported = freshWallet();
    await page.getByLabel("Label").fill("imported");
    await page.getByLabel("Private key to import (optional)").fill(imported.privateKey);
    await page.getByRole("button", { name: "Create wallet" }).click();
    await page.waitForSelector(`td:text-is('${imported.address}')`);
    expect(await page.getByLabel("Private key to import (optional)").inputValue()).to.equal("");
    expect((await page.content()).toLowerCase()).not.to.include(imported.privateKey.slice(2).toLowerCase());
  });

  it("retries a failed delivery from Webhooks, and the test receiver gets it; disables, enables, rotates the secret", async function () {
    const operator = { authorization: `Bearer ${operatorKey}` };
    const created = await api.post("/webhooks", { url: receiver.url, events: ["operation.confirmed"] }, operator);
    expect(created.status, created.text).to.equal(201);
    usedSecrets.add(created.body.secret);
    const test = await api.post(`/webhooks/${created.body.id}/test`, {}, operator);
    expect(test.status, test.text).to.equal(202);
    // Two attempts answered 500: the next one is 5 to 10 s away.
    await receiver.until((d) => d.length >= 2, 15_000, "two failed attempts");
    receiver.answerWith(() => 200);
    await signIn(operatorKey);
    await show("webhooks");
    await page.waitForSelector(`tr[data-event-id="${test.body.eventId}"]`);
    await page.screenshot({ path: path.join(SCREENSHOTS, "webhooks.png") });
    const clicked = Date.now();
    await page.getByRole("button", { name: "Retry webhook.test" }).click();
    await receiver.until((d) => d.length >= 3, 10_000, "the retried delivery");
    const took = receiver.deliveries[2].at - clicked;
    console.log(`    the retried delivery reached the receiver ${took} ms after the click`);
    expect(took).to.be.below(4_000);
    expect(receiver.deliveries[2].id).to.equal(test.body.eventId);
    await page.waitForSelector(`tr[data-event-id="${test.body.eventId}"][data-delivery-status="delivered"]`, {
      timeout: 10_000,
    });

    // Disable, enable, rotate: each as the API then shows it.
    const endpoint = async () => (await api.request("GET", `/webhooks/${created.body.id}`, { headers: operator })).body;
    await page.getByRole("button", { name: "Disable" }).click();
    await page.getByRole("button", { name: "Enable" }).waitFor();
    expect((await endpoint()).enabled).to.equal(false);
    await page.getByRole("button", { name: "Enable" }).click();
    await page.getByRole("button", { name: "Disable" }).waitFor();
    expect((await endpoint()).enabled).to.equal(true);
    await page.getByRole("button", { name: "Rotate secret" }).click();
    const rotated = page.getByLabel(/New signing secret/);
    await rotated.waitFor();
    const secret = await rotated.inputValue();
    usedSecrets.add(secret);
    expect(secret)
      .to.match(/^whsec_/)
      .and.not.equal(created.body.secret);
    expect((await endpoint()).previousSecretExpiresAt).to.be.a("string");
  });

  it("a key without wallets:read sees the Wallets view say so, in the API's words", async function () {
    await page.getByRole("button", { name: "Sign out" }).click();
    await signIn(await newKey(["nft:read"]));
    await show("wallets");
    await page.waitForSelector("[role=alert]:has-text('wallets:read')");
    expect(await page.textContent("[role=alert]")).to.include("FORBIDDEN");
  });

  it("shows a collection named <img src=x onerror=alert(1)> as text, and no dialog opens", async function () {
    // Deployed beside the service and registered without a block, so the index reads its name (one
    // deployed through POST /nft/deploy is registered from its block, and its name is not read).
    const deployer = (await fundedWallet(provider)).connect(provider);
    const sent = await deployer.sendTransaction(await deployTransaction({ ...DEFAULT_COLLECTION, name: HOSTILE_NAME }));
    const address = (await sent.wait())!.contractAddress!;
    const registered = await api.post("/collections", { address }, { authorization: `Bearer ${operatorKey}` });
    expect(registered.status, registered.text).to.be.oneOf([200, 201, 202]);
    const res = { body: { contractAddress: address } };
    await signIn(operatorKey);
    await show("collections");
    const name = page.locator("[data-collection-name]");
    for (let tries = 0; tries < 20 && (await name.allTextContents())[0] !== HOSTILE_NAME; tries++) {
      await page.locator("input[name=address]").fill(res.body.contractAddress);
      await page.getByRole("button", { name: "Show" }).click();
      await sleep(500);
    }
    await page.locator("input[name=address]").fill(res.body.contractAddress);
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForSelector(`[data-collection="${res.body.contractAddress}"]`);
    expect(await name.textContent()).to.equal(HOSTILE_NAME);
    expect(await page.locator("main img").count()).to.equal(0);
    await sleep(500);
    expect(dialogs).to.deep.equal([]);
    // No allowlist set yet (404 ALLOWLIST_NOT_FOUND): the view says so, and how to set one.
    const none = page.locator("[data-allowlist=none]");
    expect(await none.count()).to.equal(1);
    expect(await none.textContent()).to.match(
      /No allowlist is set[\s\S]*PUT \/collections\/0x[0-9a-fA-F]{40}\/allowlist/,
    );
    await page.screenshot({ path: path.join(SCREENSHOTS, "collections-hostile.png") });
  });

  it("the holders chart's y axis starts at zero: holders of 11 and 3 tokens are drawn as bars of 11 and 3", async function () {
    const deployer = (await fundedWallet(provider)).connect(provider);
    const sent = await deployer.sendTransaction(await deployTransaction({ ...DEFAULT_COLLECTION, name: "Holders" }));
    const address = (await sent.wait())!.contractAddress!;
    const nft = new Contract(address, collectionArtifact().abi, provider);
    const other = (await fundedWallet(provider)).connect(provider);
    const mint = async (who: typeof deployer, amount: number) =>
      (await (nft.connect(who) as Contract).mint(amount, { value: DEFAULT_COLLECTION.cost * BigInt(amount) })).wait();
    await mint(deployer, 10);
    await mint(deployer, 1);
    await mint(other, 3);
    const registered = await api.post("/collections", { address }, { authorization: `Bearer ${operatorKey}` });
    expect(registered.status, registered.text).to.be.oneOf([200, 201, 202]);
    await signIn(operatorKey);
    await show("collections");
    const chart = page.locator("[data-y-range]");
    for (let tries = 0; tries < 20 && (await page.locator(".chart + table tbody tr").count()) < 2; tries++) {
      await page.locator("input[name=address]").fill(address);
      await page.getByRole("button", { name: "Show" }).click();
      await sleep(500);
    }
    await page.waitForSelector(`[data-collection="${address}"] ~ .chart[data-y-range]`);
    const [low, high] = (await chart.getAttribute("data-y-range"))!.split(" to ").map(Number);
    expect(low).to.equal(0);
    expect(high).to.be.at.least(11);
  });

  it("an edition contract (ERC-1155) shows its editions, each with its holders and their amounts", async function () {
    const deployer = (await fundedWallet(provider)).connect(provider);
    const editions = await deployEditionsDirectly(deployer, 2);
    const address = await editions.getAddress();
    const [alice, bob] = [freshWallet().address, freshWallet().address];
    await (await editions.mintForFree(1n, 7n, alice)).wait();
    await (await editions.airdrop(1n, [bob], [2n])).wait();
    await (await editions.mintForFree(2n, 40n, bob)).wait();
    const registered = await api.post("/collections", { address }, { authorization: `Bearer ${operatorKey}` });
    expect(registered.status, registered.text).to.be.oneOf([200, 201, 202]);
    await signIn(operatorKey);
    await show("collections");
    const holders = page.locator('[data-edition="1"] tbody tr');
    for (let tries = 0; tries < 40 && (await page.locator('[data-edition="2"] tbody tr').count()) < 1; tries++) {
      await page.locator("input[name=address]").fill(address);
      await page.getByRole("button", { name: "Show" }).click();
      await sleep(500);
    }
    await page.waitForSelector(`[data-collection="${address}"]`);
    expect(await page.locator("[data-collection-standard]").textContent()).to.equal("ERC-1155 editions");
    expect(await page.locator('[data-edition="1"] [data-edition-supply]').textContent()).to.equal("9");
    expect(await page.locator('[data-edition="1"] [data-edition-holders]').textContent()).to.equal("2");
    const rows = await holders.evaluateAll((trs) =>
      trs.map((tr) => [tr.getAttribute("data-holder"), tr.querySelector("[data-amount]")?.textContent]),
    );
    expect(rows, "edition 1's holders, most first, with amounts").to.deep.equal([
      [alice, "7"],
      [bob, "2"],
    ]);
    const second = await page
      .locator('[data-edition="2"] tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [tr.getAttribute("data-holder"), tr.querySelector("[data-amount]")?.textContent]),
      );
    expect(second).to.deep.equal([[bob, "40"]]);
    expect(await page.locator("[data-allowlist=editions]").count()).to.equal(1);
    await page.screenshot({ path: path.join(SCREENSHOTS, "collections-editions.png") });
  });

  it("the Metadata panel shows the documents, hidden then revealed, the provenance, starting index and root CID, and previews a token's document", async function () {
    this.timeout(120_000);
    const deployer = (await fundedWallet(provider)).connect(provider);
    const sent = await deployer.sendTransaction(await deployTransaction({ ...DEFAULT_COLLECTION, name: "Hosted" }));
    const deployed = (await sent.wait())!;
    const address = deployed.contractAddress!;
    const nft = new Contract(address, collectionArtifact().abi, deployer);
    await (await nft.mint(3, { value: DEFAULT_COLLECTION.cost * 3n })).wait();
    const registered = await api.post("/collections", { address, fromBlock: deployed.blockNumber }, ROOT);
    expect(registered.status, registered.text).to.be.oneOf([200, 201, 202]);
    const tokens = [1, 2, 3].map((n) => ({
      tokenId: n,
      name: `Hosted #${n}`,
      attributes: [{ trait_type: "Hat", value: `Hat${n}` }],
    }));
    const put = await api.request("PUT", `/collections/${address}/metadata`, {
      json: { placeholder: { name: "Hosted, unrevealed" }, tokens },
      headers: ROOT,
    });
    expect(put.status, put.text).to.equal(200);
    const facts = async () => {
      const dl = page.locator("dl[data-metadata]");
      const names = await dl.locator("dt").allTextContents();
      const values = await dl.locator("dd").allTextContents();
      return Object.fromEntries(names.map((n, i) => [n, values[i].trim()]));
    };
    // A 202 registration answers before the index has started: GET /collections/{address} is 503 INDEX_BEHIND
    // until it has, and the console shows that error. Wait for the index as a client would, then for the panel.
    const indexDeadline = Date.now() + 60_000;
    for (;;) {
      const res = await api.get(`/collections/${address}`);
      if (res.status === 200) break;
      expect(res.status, res.text).to.equal(503);
      if (Date.now() > indexDeadline) throw new Error(`the index of ${address} did not start: ${res.text}`);
      await sleep(250);
    }
    const showCollection = async (state: string) => {
      for (let tries = 0; tries < 20; tries++) {
        await page.locator("input[name=address]").fill(address);
        await page.getByRole("button", { name: "Show" }).click();
        const shown = await page.waitForSelector(`[data-collection="${address}"]`, { timeout: 3_000 }).then(
          () => true,
          () => false,
        );
        if (shown && (await page.locator(`dl[data-metadata="${state}"]`).count()) === 1) return;
        await sleep(500);
      }
      throw new Error(`the panel did not show the metadata ${state}`);
    };
    /** Previews `tokenId` in the panel; answers the text shown once it is not `stale` (the index has the token). */
    const preview = async (tokenId: number, stale?: string) => {
      const shown = page.locator("pre.preview");
      for (let tries = 0; tries < 20; tries++) {
        await page.locator("input[name=tokenId]").fill(String(tokenId));
        await page.getByRole("button", { name: "Preview" }).click();
        await sleep(300);
        if ((await shown.count()) === 1 && (await shown.getAttribute("aria-label")) === `Token ${tokenId}'s document`) {
          const text = (await shown.textContent())!;
          if (text !== stale) return text;
        }
      }
      throw new Error(`no preview of token ${tokenId}`);
    };

    await signIn(operatorKey);
    await page.click('nav button[data-view="collections"]');
    await page.waitForSelector("input[name=address]", { timeout: 30_000 });
    await showCollection("hidden");
    expect(await facts()).to.deep.equal({
      Documents: "3",
      State: "hidden",
      Provenance: "not set",
      "Starting index": "not revealed",
      "Root CID": "not built (GET …/metadata.car after the reveal)",
    });
    const hidden = await preview(2);
    expect(JSON.parse(hidden)).to.deep.equal({ name: "Hosted, unrevealed" });
    expect(hidden).to.not.include("Hat");

    for (const step of ["metadata/commit", "reveal"]) {
      // The reveal waits for the commit's reveal block (REVEAL_DELAY_BLOCKS, 5) and one block after it.
      if (step === "reveal") await provider.send("hardhat_mine", ["0x6"]);
      const res = await api.post(`/collections/${address}/${step}`, { privateKey: deployer.privateKey }, ROOT);
      expect(res.status, `${step}: ${res.text}`).to.equal(200);
    }
    const car = await fetch(`${service.url}/collections/${address}/metadata.car`);
    expect(car.status).to.equal(200);
    await car.arrayBuffer();
    const state = await api.get(`/collections/${address}/metadata`);
    expect(state.body.state).to.equal("revealed");
    await showCollection("revealed");
    expect(await facts()).to.deep.equal({
      Documents: "3",
      State: "revealed",
      Provenance: await nft.provenance(),
      "Starting index": (await nft.startingIndex()).toString(),
      "Root CID": car.headers.get("x-root-cid"),
    });
    const served = await api.get(`/metadata/${(await provider.getNetwork()).chainId}/${address}/2.json`);
    expect(served.status, served.text).to.equal(200);
    expect(JSON.parse(await preview(2, hidden))).to.deep.equal(JSON.parse(served.text));
    expect(JSON.parse(served.text).name).to.match(/^Hosted #[123]$/);
    await page.screenshot({ path: path.join(SCREENSHOTS, "collections-metadata.png") });
  });

  it("Jobs shows a job's progress as a bar: an airdrop of 3 rows from a held wallet, 3 of 3 confirmed", async function () {
    this.timeout(90_000);
    const wallet = await api.post("/wallets", { kind: "local", label: "jobs-owner" }, ROOT);
    expect(wallet.status, wallet.text).to.equal(201);
    await provider.send("hardhat_setBalance", [wallet.body.address, `0x${(10n ** 20n).toString(16)}`]);
    const deployed = await api.post("/nft/deploy", { from: "jobs-owner" }, ROOT);
    expect(deployed.status, deployed.text).to.equal(201);
    const recipients = [1, 2, 3].map(() => ({ address: Wallet.createRandom().address, amount: "1" }));
    const job = await api.post(
      "/jobs",
      { kind: "airdrop", contractAddress: deployed.body.contractAddress, from: "jobs-owner", recipients },
      ROOT,
    );
    expect(job.status, job.text).to.equal(202);
    const deadline = Date.now() + 60_000;
    while ((await api.request("GET", `/jobs/${job.body.jobId}`, { headers: ROOT })).body.status !== "completed") {
      if (Date.now() > deadline) throw new Error("the job did not complete");
      await sleep(250);
    }
    await show("jobs");
    await page.waitForSelector(`progress[aria-label="Job ${job.body.jobId}: 3 of 3 rows confirmed"]`);
  });

  it("Approvals: held writes and a held job listed pending with their plans in words; the asker's approve is 403 in the API's words; rejected with a reason the mint fails, approved the pause confirms on chain; a key without approvals:decide sees no such view", async function () {
    this.timeout(120_000);
    // A collection owned by a wallet the service holds: a held write signs with it at the decision.
    const wallet = await api.post("/wallets", { kind: "local", label: "approvals-owner" }, ROOT);
    expect(wallet.status, wallet.text).to.equal(201);
    await provider.send("hardhat_setBalance", [wallet.body.address, `0x${(10n ** 20n).toString(16)}`]);
    const deployed = await api.post("/nft/deploy", { from: "approvals-owner" }, ROOT);
    expect(deployed.status, deployed.text).to.equal(201);
    const nft = deployed.body.contractAddress as string;
    const onChain = new Contract(nft, collectionArtifact().abi, provider);
    // The agent's key: a pause, an airdrop and a mint of more than 2 wait for a person.
    const made = await api.post(
      "/access-keys",
      {
        name: "agent",
        scopes: ["nft:configure", "nft:mint", "nft:mintForFree", "nft:read", "approvals:decide"],
        approval: { operations: ["setPaused", "airdrop"], mintAmountAbove: 2 },
      },
      ROOT,
    );
    expect(made.status, made.text).to.equal(201);
    usedSecrets.add(made.body.key);
    const agent = { authorization: `Bearer ${made.body.key}` };
    const from = { from: "approvals-owner", contractAddress: nft };
    const pause = await api.post("/nft/setPaused", { ...from, state: true }, agent);
    const mint = await api.post("/nft/mint", { ...from, mintAmount: 3 }, agent);
    const recipients = [1, 2, 3].map(() => ({ address: Wallet.createRandom().address, amount: "2" }));
    const job = await api.post("/jobs", { kind: "airdrop", ...from, recipients }, agent);
    for (const held of [pause, mint, job]) {
      expect(held.status, held.text).to.equal(202);
      expect(held.body.status).to.equal("awaiting_approval");
    }
    const supplyBefore = (await onChain.totalSupply()) as bigint;
    const card = (held: typeof pause) => page.locator(`article[data-approval-id="${held.body.approvalId}"]`);

    // The key that asked sees the view (it holds approvals:decide), but its approve is 403, in the API's words.
    await signIn(made.body.key);
    await show("approvals");
    await card(job).waitFor();
    await card(job)
      .getByRole("button", { name: /^Approve/ })
      .click();
    await page.waitForSelector("[data-action-error] [role=alert]:has-text('FORBIDDEN')");
    const refused = await api.post(`/approvals/${job.body.approvalId}/approve`, {}, agent);
    expect(refused.status, refused.text).to.equal(403);
    expect(await page.textContent("[data-action-error] [role=alert]")).to.include(refused.body.error.message);
    expect((await api.request("GET", `/jobs/${job.body.jobId}`, { headers: ROOT })).body.status).to.equal(
      "awaiting_approval",
    );

    // The operator: the three pending, before anything decided, each plan in words.
    await page.getByRole("button", { name: "Sign out" }).click();
    await signIn(operatorKey);
    await show("approvals");
    await page.waitForSelector("h2:has-text('Approvals')");
    for (const held of [pause, mint, job]) await card(held).waitFor();
    const pending = await page
      .locator("ul.approvals article")
      .evaluateAll((all) => all.map((a) => a.getAttribute("data-approval-id")));
    expect(pending).to.have.members([pause, mint, job].map((held) => held.body.approvalId));
    expect(await page.locator("section h3").allTextContents()).to.deep.equal(["Pending", "Decided"]);
    const listed = (
      await api.request("GET", "/approvals?status=pending", { headers: { authorization: `Bearer ${operatorKey}` } })
    ).body.approvals as Array<{ id: string; plan: { value: string; gas?: string } }>;
    const planOf = (held: typeof pause) => listed.find((a) => a.id === held.body.approvalId)!.plan;
    const pauseText = (await card(pause).textContent())!;
    expect(pauseText).to.include("Pause minting").and.include(`agent (key ${made.body.id})`).and.include(nft);
    expect(pauseText).to.include("(31337)").and.include(wallet.body.address).and.include("nothing (0 ETH)");
    expect(pauseText)
      .to.include(`${planOf(pause).gas} gas at most`)
      .and.match(/expires .+ \(in 23 h \d+ min\)/);
    const mintText = (await card(mint).textContent())!;
    const mintValue = planOf(mint).value;
    expect(mintText).to.include("Mint 3 tokens");
    expect(mintText).to.include(mintValue === "0" ? "nothing (0 ETH)" : `(${mintValue} wei)`);
    const jobText = (await card(job).textContent())!;
    expect(jobText).to.include("Airdrop 6 tokens to 3 addresses").and.include(job.body.jobId);
    expect(jobText).to.match(/Estimated cost\s*about [\d.]+ ETH/);

    // Reject the mint: a labelled reason, required; the operation then fails with APPROVAL_REJECTED.
    await card(mint)
      .getByRole("button", { name: /^Reject…/ })
      .click();
    await page.waitForSelector(`article[data-approval-id="${mint.body.approvalId}"] textarea[name=reason]:focus`);
    const reason = "Three at once is more than agreed";
    await card(mint)
      .getByLabel(/Reason for rejecting/)
      .fill(reason);
    await card(mint)
      .getByRole("button", { name: /^Reject with this reason/ })
      .click();
    await page.waitForSelector("[data-outcome]:focus:has-text('Rejected')");
    const rejectedRow = page.locator(`tr[data-approval-id="${mint.body.approvalId}"][data-approval-status="rejected"]`);
    await rejectedRow.waitFor();
    expect(await rejectedRow.textContent())
      .to.include(reason)
      .and.include("console-6");
    expect(await card(mint).count()).to.equal(0);
    const failed = await api.request("GET", `/nft/operations/${mint.body.operationId}`, { headers: ROOT });
    expect(failed.body.status).to.equal("failed");
    expect(failed.body.error.code).to.equal("APPROVAL_REJECTED");
    expect((await onChain.totalSupply()) as bigint).to.equal(supplyBefore);

    // Approve the pause: sent as if it had just arrived, and the collection is paused on chain.
    expect(await onChain.paused()).to.equal(false);
    await card(pause)
      .getByRole("button", { name: /^Approve/ })
      .click();
    await page.waitForSelector("[data-outcome]:has-text('Approved: Pause minting')");
    await page.waitForSelector(`tr[data-approval-id="${pause.body.approvalId}"][data-approval-status="approved"]`);
    const deadline = Date.now() + 15_000;
    while (
      (await api.request("GET", `/nft/operations/${pause.body.operationId}`, { headers: ROOT })).body.status !==
      "confirmed"
    ) {
      if (Date.now() > deadline) throw new Error("the approved pause did not confirm");
      await sleep(250);
    }
    expect(await onChain.paused()).to.equal(true);
    await page.screenshot({ path: path.join(SCREENSHOTS, "approvals.png") });

    // A key without approvals:decide: no Approvals in its views (GET /approvals answered it 403).
    await page.getByRole("button", { name: "Sign out" }).click();
    const probed = page.waitForResponse((r) => r.url().endsWith("/approvals?status=pending&limit=1"));
    await signIn(await newKey(["nft:read"]));
    await page.waitForSelector("h2:has-text('Operations')");
    expect((await probed).status()).to.equal(403);
    await sleep(300);
    expect(await page.locator('nav button[data-view="approvals"]').count()).to.equal(0);
    const views = (await page.locator("nav button").allTextContents()).map((label) => label.trim());
    expect(views).to.include("Operations").and.not.include("Approvals");
  });

  it("every view: axe-core finds no serious or critical violation; a screenshot of each at 1280x800", async function () {
    const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForSelector("h1");
    const problems: string[] = [];
    const audit = async (name: string) => {
      await page.evaluate(axeSource);
      const violations = (await page.evaluate(
        "axe.run().then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })))",
      )) as Array<{ id: string; impact: string; nodes: number }>;
      for (const v of violations)
        if (v.impact === "serious" || v.impact === "critical") problems.push(`${name}: ${v.id} (${v.impact})`);
    };
    await audit("sign-in");
    await page.screenshot({ path: path.join(SCREENSHOTS, "sign-in.png") });
    await signIn(operatorKey);
    for (const view of VIEWS) {
      await show(view);
      await sleep(300);
      await audit(view);
      await page.screenshot({ path: path.join(SCREENSHOTS, `view-${view}.png`) });
    }
    expect(problems).to.deep.equal([]);
  });

  it("nothing the page logged, and no line the service printed, carries a key; no CSP violation, no script error", function () {
    expect(pageErrors).to.deep.equal([]);
    const logged = consoleMessages.join("\n");
    expect(leakedSecrets(logged), "console messages").to.deep.equal([]);
    expect(logged).not.to.match(/nfto_/);
    expect(logged).not.to.match(/Content Security Policy/i);
    const lines = service.output().split("\n");
    expect(lines.filter((line) => leakedSecrets(line).length > 0 || line.includes("nfto_"))).to.deep.equal([]);
  });
});
