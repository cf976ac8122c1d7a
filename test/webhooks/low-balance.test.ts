/**
 * wallet.low_balance with the service built in this process (startService, PGlite, a `hardhat
 * node`), the balance read every 200 ms instead of 5 s: a held wallet's balance, moved on the real
 * chain with hardhat_setBalance, fires the event once per crossing below its lowBalance.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { loadConfig } from "../../server/config/config";
import { createLogger } from "../../server/http/logger";
import { startService, type RunningService } from "../../server/app/main";
import { ApiClient, ChainNode, sleep, TEST_API_KEY } from "../api/harness";
import { ChainControl } from "../support/chain-control";
import { Receiver } from "./receiver";

const ROOT = { authorization: `Bearer ${TEST_API_KEY}` };
const ETHER = 10n ** 18n;
const POLL_MS = 200;

describe("wallet.low_balance (a held wallet on a real chain)", function () {
  let node: ChainNode;
  let service: RunningService;
  let api: ApiClient;
  let receiver: Receiver;
  let chain: ChainControl;
  const dataDir = mkdtempSync(path.join(tmpdir(), "webhooks-low-balance-"));
  const setBalance = (address: string, wei: bigint) =>
    chain.send("hardhat_setBalance", [address, `0x${wei.toString(16)}`]);
  /** Five balance reads: time for an event that would come, to come. */
  const settle = () => sleep(POLL_MS * 5);

  before(async function () {
    this.timeout(90_000);
    [node, receiver] = await Promise.all([ChainNode.start(), Receiver.start()]);
    chain = new ChainControl(node.rpcUrl);
    const config = loadConfig({
      RPC_URL: node.rpcUrl,
      API_KEY: TEST_API_KEY,
      PORT: "0",
      DATA_DIR: dataDir,
      WALLET_MASTER_KEY: randomBytes(32).toString("hex"),
      WEBHOOK_ALLOW_PRIVATE: "true",
    });
    service = await startService(config, createLogger("silent"), { lowBalancePollMs: POLL_MS });
    api = new ApiClient(service.apiUrl);
  });

  after(async function () {
    this.timeout(30_000);
    await service?.close();
    await receiver?.close();
    await node?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("fires once when the balance crosses below lowBalance, and again only after it went back above", async function () {
    this.timeout(60_000);
    const made = await api.request("POST", "/webhooks", {
      json: { url: receiver.url, events: ["wallet.low_balance"] },
      headers: ROOT,
    });
    expect(made.status, made.text).to.equal(201);
    const wallet = await api.request("POST", "/wallets", { json: { kind: "local", label: "treasury" }, headers: ROOT });
    expect(wallet.status, wallet.text).to.equal(201);
    const address = wallet.body.address as string;
    await setBalance(address, 2n * ETHER);
    const policy = await api.request("PATCH", `/wallets/${address}`, {
      json: { lowBalance: ETHER.toString() },
      headers: ROOT,
    });
    expect(policy.status, policy.text).to.equal(200);
    const events = () => receiver.ofType("wallet.low_balance");

    await settle();
    expect(events(), "above the threshold: nothing").to.have.length(0);

    await setBalance(address, ETHER / 2n);
    await receiver.until(() => events().length === 1, 10_000, "the first crossing");
    expect(events()[0].json.data).to.deep.equal({
      address,
      label: "treasury",
      balance: (ETHER / 2n).toString(),
      lowBalance: ETHER.toString(),
      chainId: "31337",
    });

    await setBalance(address, ETHER / 4n);
    await settle();
    expect(events(), "still below: no second event").to.have.length(1);

    await setBalance(address, 3n * ETHER);
    await settle();
    expect(events(), "back above: no event").to.have.length(1);

    await setBalance(address, ETHER / 10n);
    await receiver.until(() => events().length === 2, 10_000, "the second crossing");
    expect(events()[1].json.data).to.include({ balance: (ETHER / 10n).toString() });
    expect(events()[1].id).not.to.equal(events()[0].id);
  });

  it("reaches only endpoints whose creating key reads the wallet: wallets:read, and the wallet within its limits", async function () {
    this.timeout(60_000);
    const held = async (label: string) => {
      const res = await api.request("POST", "/wallets", { json: { kind: "local", label }, headers: ROOT });
      expect(res.status, res.text).to.equal(201);
      return res.body.address as string;
    };
    const [first, second] = [await held("payroll"), await held("gas")];
    const key = async (name: string, scopes: string[], wallets?: string[]) => {
      const res = await api.request("POST", "/access-keys", { json: { name, scopes, wallets }, headers: ROOT });
      expect(res.status, res.text).to.equal(201);
      return { authorization: `Bearer ${res.body.key as string}` };
    };
    const subscribe = async (path: string, headers: Record<string, string>) => {
      const res = await api.request("POST", "/webhooks", {
        json: { url: `${receiver.url}/${path}`, events: ["wallet.low_balance"] },
        headers,
      });
      expect(res.status, res.text).to.equal(201);
    };
    await subscribe("every-wallet", await key("every wallet", ["webhooks:manage", "wallets:read"]));
    await subscribe("first-only", await key("first wallet", ["webhooks:manage", "wallets:read"], [first]));
    await subscribe("no-scope", await key("no wallets:read", ["webhooks:manage", "nft:read"]));

    for (const address of [first, second]) {
      await setBalance(address, 2n * ETHER);
      const policy = await api.request("PATCH", `/wallets/${address}`, {
        json: { lowBalance: ETHER.toString() },
        headers: ROOT,
      });
      expect(policy.status, policy.text).to.equal(200);
    }
    await settle();
    for (const address of [first, second]) await setBalance(address, ETHER / 2n);

    const at = (path: string) =>
      receiver
        .ofType("wallet.low_balance")
        .filter((d) => d.path === `/hook/${path}`)
        .map((d) => d.json.data.address);
    await receiver.until(
      () => at("every-wallet").length === 2,
      10_000,
      "both crossings, to the unlimited key's endpoint",
    );
    // The other endpoints were written the same events, in the same rounds: a little longer for any stray one.
    await settle();
    expect(at("every-wallet")).to.have.members([first, second]);
    expect(at("first-only"), "a key limited to the first wallet").to.deep.equal([first]);
    expect(at("no-scope"), "a key without wallets:read").to.deep.equal([]);
  });
});
