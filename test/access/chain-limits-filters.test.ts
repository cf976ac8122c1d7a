/**
 * Access keys limited by chain, in the service's own configuration (API.md, "Chains": access keys;
 * issue 52): audit events about webhook endpoints, webhook endpoints' `collections` and `chains`
 * filters and their deliveries, and a wallet's `"*"` policy. Two `hardhat node`s ("alpha" and
 * "beta") with one collection at the same address on both, as in chain-limits.test.ts.
 */
import { expect } from "chai";
import { getAddress, type Wallet } from "ethers";
import { expectError } from "../api/expectations";
import { ApiClient, ChainNode, ServiceProcess, TEST_API_KEY, type ApiResponse } from "../api/harness";
import { newMasterKey } from "../wallets/fixture";
import { startTwoChains } from "../support/two-chains";

const ALPHA = 31_431;
const BETA = 31_432;
const ROOT = { authorization: `Bearer ${TEST_API_KEY}` };
/** Nothing listens there: deliveries fail and wait, but each one an endpoint takes is listed. */
const RECEIVER = "http://127.0.0.1:9/hook";

describe("access keys and chains: audit events, webhook filters and wallet policies", function () {
  this.timeout(300_000);
  let alpha: ChainNode;
  let beta: ChainNode;
  let service: ServiceProcess;
  let api: ApiClient;
  let owner: Wallet;
  let collection: string;
  const auth = (key: string) => ({ authorization: `Bearer ${key}` });

  before(async function () {
    ({ alpha, beta, owner, collection } = await startTwoChains(ALPHA, BETA));
    collection = getAddress(collection);
    service = await ServiceProcess.start({
      chains: [
        { id: ALPHA, name: "alpha", rpcUrls: [alpha.rpcUrl] },
        { id: BETA, name: "beta", rpcUrls: [beta.rpcUrl] },
      ],
      env: { WALLET_MASTER_KEY: newMasterKey(), WEBHOOK_ALLOW_PRIVATE: "true", BLOCK_POLL_MS: "100" },
    });
    api = new ApiClient(service.url);
    const held = await api.post("/wallets", { kind: "local", label: "shop", privateKey: owner.privateKey }, ROOT);
    expect(held.status, held.text).to.equal(201);
  });

  after(async function () {
    await service?.stop();
    await Promise.all([alpha?.stop(), beta?.stop()]);
  });

  async function makeKey(body: Record<string, unknown>): Promise<string> {
    const made = await api.post("/access-keys", body, ROOT);
    expect(made.status, made.text).to.equal(201);
    return made.body.key as string;
  }

  async function endpoint(filters: Record<string, unknown>, headers = ROOT): Promise<string> {
    const made = await api.post("/webhooks", { url: RECEIVER, events: ["operation.confirmed"], ...filters }, headers);
    expect(made.status, made.text).to.equal(201);
    return made.body.id as string;
  }

  const forbidden = (res: ApiResponse, naming: string) => {
    expectError(res, 403, "FORBIDDEN");
    expect(res.body.error.message).to.include(naming);
  };

  it('audit events: a key limited to "<chain>:<address>" sees the endpoints filtered within it; a bare address sees its chains\'', async function () {
    const alphaOnly = await endpoint({ collections: [collection], chains: [ALPHA] });
    const everyChain = await endpoint({ collections: [collection] });
    const viewer = await makeKey({
      name: "auditor",
      scopes: ["access-keys:manage"],
      collections: [`alpha:${collection}`],
    });
    const seen = async (key: string) => {
      const res = await api.request("GET", "/audit-events?limit=500", { headers: auth(key) });
      expect(res.status, res.text).to.equal(200);
      return (res.body.auditEvents as { targetType: string; targetId: string }[])
        .filter((e) => e.targetType === "webhook")
        .map((e) => e.targetId);
    };
    const seenByViewer = await seen(viewer);
    expect(seenByViewer, "an endpoint of this address on alpha only").to.include(alphaOnly);
    expect(seenByViewer, "an endpoint of this address on every chain").to.not.include(everyChain);

    // An endpoint filtered "<chain>:<address>" is within a bare address's limit, and within that entry.
    const qualified = await endpoint({ collections: [`alpha:${collection}`] });
    const onBeta = await endpoint({ collections: [`beta:${collection}`] });
    const bare = await makeKey({ name: "auditor-bare", scopes: ["access-keys:manage"], collections: [collection] });
    expect(await seen(bare)).to.include.members([alphaOnly, everyChain, qualified, onBeta]);
    const again = await seen(viewer);
    expect(again).to.include(qualified);
    expect(again).to.not.include(onBeta);
  });

  it('webhooks: a key limited to "<chain>:<address>" makes endpoints within it (403 beyond), and delivery honours the filter', async function () {
    const key = auth(
      await makeKey({
        name: "hooks-alpha-collection",
        scopes: ["nft:read", "webhooks:manage"],
        collections: [`alpha:${collection}`],
      }),
    );
    const hook = (filters: Record<string, unknown>) =>
      api.post("/webhooks", { url: RECEIVER, events: ["operation.confirmed"], ...filters }, key);
    // A bare address names it on every chain, beta's too.
    forbidden(await hook({ collections: [collection] }), `the collection ${collection.toLowerCase()}`);
    forbidden(await hook({ collections: [`beta:${collection}`] }), "collection");
    const qualified = await hook({ collections: [`alpha:${collection}`] });
    expect(qualified.status, qualified.text).to.equal(201);
    expect(qualified.body.collections).to.deep.equal([`${ALPHA}:${collection}`]);
    // A bare address with a chains filter within the key's chain.
    const filtered = await hook({ collections: [collection], chains: [ALPHA] });
    expect(filtered.status, filtered.text).to.equal(201);
    expect(filtered.body.collections).to.deep.equal([collection]);
    // Removing the chains filter would widen the bare address to every chain.
    forbidden(
      await api.request("PATCH", `/webhooks/${filtered.body.id}`, { json: { chains: null }, headers: key }),
      "collection",
    );
    const unfiltered = await hook({});
    expect(unfiltered.status, unfiltered.text).to.equal(201);

    // Old endpoints (bare addresses, made by the root key) and new ones, side by side.
    const everything = await endpoint({});
    const bareEveryChain = await endpoint({ collections: [collection] });
    const betaOnly = await endpoint({ collections: [`beta:${collection}`] });
    for (const chain of ["alpha", "beta"]) {
      const minted = await api.post(
        "/nft/mintForFree",
        { chain, privateKey: owner.privateKey, contractAddress: collection, receiver: owner.address, mintAmount: 1 },
        ROOT,
      );
      expect(minted.status, minted.text).to.equal(200);
    }
    const confirmed = async (id: string) => {
      const res = await api.request("GET", `/webhooks/${id}/deliveries?limit=500`, { headers: ROOT });
      expect(res.status, res.text).to.equal(200);
      return (res.body.deliveries as { type: string }[]).filter((d) => d.type === "operation.confirmed").length;
    };
    // Both events fan out to every endpoint in the transactions that write them: once the
    // unfiltered endpoint holds both, every other endpoint holds what it takes.
    const deadline = Date.now() + 60_000;
    while ((await confirmed(everything)) < 2) {
      expect(Date.now(), "both confirmations reach the unfiltered endpoint").to.be.lessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await confirmed(bareEveryChain), "a bare address: every chain").to.equal(2);
    expect(await confirmed(betaOnly), "beta:<address>").to.equal(1);
    expect(await confirmed(qualified.body.id as string), "alpha:<address>, its key's").to.equal(1);
    expect(await confirmed(filtered.body.id as string), "<address> on chains [alpha]").to.equal(1);
    // No filter: what the key reads (alpha's collection only).
    expect(await confirmed(unfiltered.body.id as string), "no filter, the key's limit").to.equal(1);
  });

  it("webhooks: a key limited to alpha cannot make an endpoint for beta's events (403 naming the chain)", async function () {
    const key = auth(
      await makeKey({ name: "hooks-alpha", scopes: ["nft:read", "webhooks:manage"], chains: ["alpha"] }),
    );
    const hook = (filters: Record<string, unknown>) =>
      api.post("/webhooks", { url: RECEIVER, events: ["operation.confirmed"], ...filters }, key);
    forbidden(await hook({ chains: [BETA] }), String(BETA));
    forbidden(await hook({ chains: [ALPHA, BETA] }), String(BETA));
    forbidden(await hook({ collections: [`beta:${collection}`] }), String(BETA));
    const own = await hook({ chains: [ALPHA], collections: [`alpha:${collection}`] });
    expect(own.status, own.text).to.equal(201);
    forbidden(
      await api.request("PATCH", `/webhooks/${own.body.id}`, { json: { chains: [BETA] }, headers: key }),
      String(BETA),
    );
  });

  it('wallets: a key limited to some chains may not set the "*" policy (403 naming "*"); its own chains\' it may', async function () {
    const key = auth(
      await makeKey({ name: "wallets-alpha", scopes: ["wallets:read", "wallets:manage"], chains: ["alpha"] }),
    );
    const patch = (body: Record<string, unknown>, headers = key) =>
      api.request("PATCH", `/wallets/${owner.address}`, { json: body, headers });
    const betaLimit = async () => {
      const res = await api.request("GET", `/wallets/${owner.address}?chain=beta`, { headers: ROOT });
      expect(res.status, res.text).to.equal(200);
      return res.body.policy.dailySpendLimit as string | null;
    };
    forbidden(await patch({ policy: { "*": { dailySpendLimit: "7" } } }), '"*"');
    forbidden(await patch({ policy: { alpha: { lowBalance: "5" }, "*": { dailySpendLimit: "7" } } }), '"*"');
    // With two chains, the top-level fields without a chain are every chain's ("*") too.
    forbidden(await patch({ dailySpendLimit: "7" }), '"*"');
    expect(await betaLimit(), 'beta falls back on no "*" policy').to.equal(null);
    const own = await patch({ policy: { alpha: { dailySpendLimit: "9" } } });
    expect(own.status, own.text).to.equal(200);
    const root = await patch({ policy: { "*": { dailySpendLimit: "7" } } }, ROOT);
    expect(root.status, root.text).to.equal(200);
    expect(await betaLimit()).to.equal("7");
    const cleared = await patch({ policy: { "*": { dailySpendLimit: null } } }, ROOT);
    expect(cleared.status, cleared.text).to.equal(200);
  });
});
