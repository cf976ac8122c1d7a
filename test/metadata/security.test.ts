/**
 * Hosted metadata under a security review (issue 52): who may change a collection's metadata and
 * see its documents before the reveal, a dry-run commit that keeps nothing, the reveal block the
 * commit fixes, documents RFC 8785 cannot write, the public routes' cost (a CAR built once while
 * the service keeps answering; unknown addresses that never reach the RPC provider; a limit per
 * client). One service behind a counting JSON-RPC proxy, a real node, the real contract.
 */
import { expect } from "chai";
import { Wallet, type Contract, type JsonRpcProvider } from "ethers";
import { DEFAULT_COLLECTION, deployTransaction } from "../../server/chain/collection";
import {
  ApiClient,
  ChainNode,
  ServiceProcess,
  collectionAt,
  directProvider,
  fundedWallet,
  sleep,
} from "../api/harness";
import { sharedNode } from "../support/shared-node";
import { ROOT_KEY } from "../collections/fixture";
import { RpcProxy } from "../support/rpc-proxy";

/** REVEAL_DELAY_BLOCKS's default. */
const DELAY = 5;
/** The public documents one client may fetch a minute here (METADATA_REQUESTS_PER_MINUTE). */
const PER_MINUTE = 250;
const COUNT = 4;
const secret = (n: number) => `SecretTrait${n}x`;
const documentOf = (n: number) => ({ name: `Token #${n}`, attributes: [{ trait_type: "Eyes", value: secret(n) }] });
const tokens = (count: number) => Array.from({ length: count }, (_, i) => ({ tokenId: i + 1, ...documentOf(i + 1) }));

describe("Metadata security: owners' keys, dry runs, the reveal block, inputs, public routes' cost (real node, real contract)", function () {
  let node: ChainNode;
  let proxy: RpcProxy;
  let provider: JsonRpcProvider;
  let service: ServiceProcess;
  let api: ApiClient;
  let owner: Wallet;
  let nft: Contract;
  let collection: string;
  let chainId: string;
  /** Bearer headers of keys with nft:configure: one limited to the owner's wallet, one to another wallet. */
  let ownerKey: Record<string, string>;
  let otherKey: Record<string, string>;
  let readKey: Record<string, string>;

  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
    for (const deadline = Date.now() + timeoutMs; ; await sleep(100)) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    }
  }

  const deploy = async () => {
    const sent = await owner.sendTransaction(await deployTransaction({ ...DEFAULT_COLLECTION, cost: 0n }));
    return (await sent.wait())!.contractAddress!;
  };
  const put = (at: string, json: unknown, headers: Record<string, string> = ROOT_KEY) =>
    api.request("PUT", `/collections/${at}/metadata`, { json, headers });
  const state = (at: string, headers: Record<string, string> = ROOT_KEY) =>
    api.request("GET", `/collections/${at}/metadata`, { headers });
  const newKey = async (grant: Record<string, unknown>) => {
    const res = await api.post("/access-keys", { name: `k-${Date.now()}-${Math.random()}`, ...grant }, ROOT_KEY);
    expect(res.status, res.text).to.equal(201);
    return { Authorization: `Bearer ${res.body.key as string}` };
  };
  /** Mines until block `target` is mined. */
  const mineTo = async (target: bigint) => {
    const head = BigInt(await provider.getBlockNumber());
    if (head < target) await provider.send("hardhat_mine", [`0x${(target - head).toString(16)}`]);
  };

  before(async function () {
    this.timeout(400_000);
    node = await sharedNode();
    proxy = await RpcProxy.start(node.rpcUrl);
    provider = directProvider(node.rpcUrl);
    owner = (await fundedWallet(provider)).connect(provider);
    collection = await deploy();
    nft = collectionAt(collection, owner);
    chainId = (await provider.getNetwork()).chainId.toString();
    service = await ServiceProcess.start({
      rpcUrl: proxy.url,
      env: { BLOCK_POLL_MS: "100", METADATA_REQUESTS_PER_MINUTE: String(PER_MINUTE) },
    });
    api = new ApiClient(service.url);
    ownerKey = await newKey({ scopes: ["nft:read", "nft:configure"], wallets: [owner.address] });
    otherKey = await newKey({ scopes: ["nft:read", "nft:configure"], wallets: [Wallet.createRandom().address] });
    readKey = await newKey({ scopes: ["nft:read"] });
  });

  after(async function () {
    this.timeout(60_000);
    provider?.destroy();
    await service?.stop();
    await proxy?.close();
  });

  it("lets only a key that may use the owner's wallet change the metadata, and list the documents before the reveal", async function () {
    this.timeout(120_000);
    const refused = await put(
      collection,
      { placeholder: { name: "evil", image: "https://evil.example/x.png" } },
      otherKey,
    );
    expect(refused.status, refused.text).to.equal(403);
    expect(refused.body.error.code).to.equal("FORBIDDEN");
    const stored = await put(collection, { placeholder: { name: "Mystery" }, tokens: tokens(COUNT) }, ownerKey);
    expect(stored.status, stored.text).to.equal(200);
    expect(stored.body.count).to.equal(COUNT);

    const mine = await state(collection, ownerKey);
    expect(mine.status, mine.text).to.equal(200);
    expect(mine.body.tokens).to.have.length(COUNT);
    expect(mine.body.state).to.equal("hidden");
    // Another key sees the state, the count and the placeholder, not one document.
    for (const headers of [otherKey, readKey, {}]) {
      const theirs = await state(collection, headers);
      expect(theirs.status, theirs.text).to.equal(200);
      expect(theirs.body.count).to.equal(COUNT);
      expect(theirs.body.placeholder).to.deep.equal({ name: "Mystery" });
      expect(theirs.body.tokens).to.equal(undefined);
      for (let n = 1; n <= COUNT; n++) expect(theirs.text).to.not.include(secret(n));
    }
    const placeholder = (await state(collection, ROOT_KEY)).body.placeholder;
    expect(placeholder).to.deep.equal({ name: "Mystery" });
  });

  it("refuses with 400 naming the token a document nested 20,000 deep, holding 1e400, or a lone surrogate; stores nothing", async function () {
    this.timeout(60_000);
    const deep = "[".repeat(20_000) + "]".repeat(20_000);
    const bodies = [
      {
        raw: `{"tokens":[{"tokenId":1,"name":"a"},{"tokenId":2,"name":"b","deep":${deep}}]}`,
        path: /^tokens\.1\.deep/,
      },
      { raw: `{"tokens":[{"tokenId":1,"name":"a"},{"tokenId":2,"name":"b","big":1e400}]}`, path: /^tokens\.1\.big$/ },
      { raw: `{"tokens":[{"tokenId":1,"name":"a"},{"tokenId":2,"name":"b\\ud800"}]}`, path: /^tokens\.1\.name$/ },
      { raw: `{"placeholder":{"name":"\\udc00x"}}`, path: /^placeholder\.name$/ },
    ];
    for (const { raw, path } of bodies) {
      const res = await api.request("PUT", `/collections/${collection}/metadata`, { raw, headers: ownerKey });
      expect(res.status, res.text.slice(0, 300)).to.equal(400);
      expect(res.body.error.code).to.equal("VALIDATION_ERROR");
      const paths = (res.body.error.details as Array<{ path: string }>).map((d) => d.path);
      expect(
        paths.some((p) => path.test(p)),
        paths.join(", "),
      ).to.equal(true);
    }
    const after = await state(collection, ownerKey);
    expect(after.body.tokens.map((t: { name: string }) => t.name)).to.deep.equal(tokens(COUNT).map((t) => t.name));
    expect(after.body.placeholder).to.deep.equal({ name: "Mystery" });
  });

  it("a dry-run commit changes nothing: not frozen, no provenance, the next PUT stored", async function () {
    this.timeout(60_000);
    const dry = await api.post(`/collections/${collection}/metadata/commit?dryRun=true`, {
      privateKey: owner.privateKey,
    });
    expect(dry.status, dry.text).to.equal(200);
    expect(dry.body.dryRun).to.equal(true);
    expect(dry.body.result.count).to.equal(COUNT);
    const after = await state(collection, ownerKey);
    expect(after.body.state).to.equal("hidden");
    expect(after.body.provenance).to.equal(null);
    expect(await nft.provenanceCount()).to.equal(0n);
    const again = await put(collection, { tokens: [{ tokenId: 1, ...documentOf(1) }] }, ownerKey);
    expect(again.status, again.text).to.equal(200);
  });

  it("fixes the reveal block at the commit: 409 REVEAL_TOO_EARLY before it is mined, a reset past 256 blocks, then the reveal from its hash", async function () {
    this.timeout(180_000);
    const commit = await api.post(`/collections/${collection}/metadata/commit`, { privateKey: owner.privateKey });
    expect(commit.status, commit.text).to.equal(200);
    expect(commit.body.status).to.equal("confirmed");
    const revealBlock = BigInt((commit.body.blockNumber as number) + DELAY);
    expect(await nft.revealBlock()).to.equal(revealBlock);
    const shown = await state(collection, ownerKey);
    expect(shown.body.state).to.equal("committed");
    expect(shown.body.revealBlock).to.equal(revealBlock.toString());
    const early = await api.post(`/collections/${collection}/reveal`, { privateKey: owner.privateKey });
    expect(early.status, early.text).to.equal(409);
    expect(early.body.error.code).to.equal("REVEAL_TOO_EARLY");
    expect(await nft.revealed()).to.equal(false);

    // Past 256 blocks the chain no longer answers the block's hash: the reveal moves it forward.
    await mineTo(revealBlock + 300n);
    const reset = await api.post(`/collections/${collection}/reveal`, { privateKey: owner.privateKey });
    expect(reset.status, reset.text).to.equal(200);
    expect(reset.body.revealed).to.equal(false);
    const next = BigInt(reset.body.revealBlock as string);
    expect(next > revealBlock + 300n).to.equal(true);
    expect(await nft.revealBlock()).to.equal(next);
    expect((await state(collection, ownerKey)).body.revealBlock).to.equal(next.toString());

    await mineTo(next + 1n);
    const res = await api.post(`/collections/${collection}/reveal`, { privateKey: owner.privateKey });
    expect(res.status, res.text).to.equal(200);
    const expected = BigInt((await provider.getBlock(Number(next)))!.hash!) % BigInt(COUNT);
    expect(res.body.startingIndex).to.equal(expected.toString());
    expect(await nft.startingIndex()).to.equal(expected);
    // Revealed: every key may list the documents.
    const open = await state(collection, readKey);
    expect(open.body.state).to.equal("revealed");
    expect(open.body.tokens).to.have.length(COUNT);
  });

  it("builds a large collection's CAR once for parallel requests while /health/live stays fast", async function () {
    this.timeout(600_000);
    const big = await deploy();
    const total = 6_000;
    const filler = "x".repeat(3_000);
    for (let from = 1; from <= total; from += 2_000) {
      const batch = Array.from({ length: 2_000 }, (_, i) => ({
        tokenId: from + i,
        name: `Token #${from + i}`,
        description: `${filler} ${from + i}`,
      }));
      const res = await put(big, { tokens: batch });
      expect(res.status, res.text.slice(0, 300)).to.equal(200);
    }
    const commit = await api.post(`/collections/${big}/metadata/commit`, { privateKey: owner.privateKey });
    expect(commit.status, commit.text).to.equal(200);
    await mineTo((await collectionAt(big, owner).revealBlock()) + 1n);
    const reveal = await api.post(`/collections/${big}/reveal`, { privateKey: owner.privateKey });
    expect(reveal.status, reveal.text).to.equal(200);

    const car = async () => {
      const res = await fetch(`${service.url}/collections/${big}/metadata.car`);
      return { status: res.status, root: res.headers.get("x-root-cid"), bytes: Buffer.from(await res.arrayBuffer()) };
    };
    let inFlight = true;
    const cars = Promise.all([car(), car(), car(), car()]).finally(() => (inFlight = false));
    const health: number[] = [];
    while (inFlight) {
      const started = Date.now();
      const res = await fetch(`${service.url}/health/live`);
      expect(res.status).to.equal(200);
      health.push(Date.now() - started);
      await sleep(50);
    }
    const answers = await cars;
    for (const answer of answers) expect(answer.status).to.equal(200);
    expect(new Set(answers.map((a) => a.root)).size).to.equal(1);
    expect(answers.every((a) => a.bytes.equals(answers[0].bytes))).to.equal(true);
    console.log(
      `      4 CARs of ${total} documents (${answers[0].bytes.length} bytes); /health/live at most ${Math.max(...health)} ms over ${health.length} probes`,
    );
    expect(Math.max(...health), `/health/live took ${health.join(", ")} ms`).to.be.below(2_000);
    // Built once: a later request is the kept bytes.
    const started = Date.now();
    const cached = await car();
    expect(cached.bytes.equals(answers[0].bytes)).to.equal(true);
    console.log(`      a repeat answered in ${Date.now() - started} ms`);
  });

  it("answers GETs for addresses it hosts nothing of with no upstream JSON-RPC call, and limits each client", async function () {
    this.timeout(120_000);
    proxy.resetCounts();
    const chainCalls = () => (proxy.calls.get("eth_call") ?? 0) + (proxy.calls.get("eth_getCode") ?? 0);
    const statuses = new Map<number, number>();
    for (let n = 0; n < 200; n += 20) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => api.get(`/metadata/${chainId}/${Wallet.createRandom().address}/1.json`)),
      );
      for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    }
    expect([...statuses.entries()]).to.deep.equal([[404, 200]]);
    expect(chainCalls(), JSON.stringify([...proxy.calls])).to.equal(0);

    // Past METADATA_REQUESTS_PER_MINUTE from one client: 429 with Retry-After.
    const limited = await until("a 429 from the public route", async () => {
      const res = await api.get(`/metadata/${chainId}/${collection}/1.json`);
      return res.status === 429 ? res : undefined;
    });
    expect(limited.body.error.code).to.equal("RATE_LIMITED");
    expect(Number(limited.headers.get("retry-after"))).to.be.above(0);
  });
});
