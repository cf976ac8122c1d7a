import { expect } from "chai";
import { ZeroAddress, type JsonRpcProvider, type Wallet } from "ethers";
import canonicalize from "canonicalize";
import { NFTEditions__factory, type NFTEditions } from "../../typechain-types";
import { ApiClient, ChainNode, ServiceProcess, directProvider, fundedWallet, sleep } from "../api/harness";
import { ROOT_KEY } from "../collections/fixture";

const documentOf = (n: number) => ({
  name: `Edition #${n}`,
  description: "A print of one artwork",
  image: `ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/${n}.png`,
  attributes: [{ trait_type: "Tier", value: `Tier${n}` }],
});
const PLACEHOLDER = { name: "Mystery", image: "ipfs://bafyplaceholder/hidden.png" };

describe("Metadata on an ERC-1155 edition contract: documents per edition id, served as uploaded, no reveal (real node, real contract)", function () {
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let service: ServiceProcess;
  let api: ApiClient;
  let owner: Wallet;
  let editions: NFTEditions;
  let address: string;
  let chainId: string;

  before(async function () {
    this.timeout(400_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    owner = (await fundedWallet(provider)).connect(provider);
    editions = await new NFTEditions__factory(owner).deploy(
      "Prints",
      "PRNT",
      "ipfs://QmBase/",
      ZeroAddress,
      0n,
      ZeroAddress,
    );
    await editions.waitForDeployment();
    address = await editions.getAddress();
    // Three free editions of 100, up to 10 a mint.
    for (let i = 0; i < 3; i++) await (await editions.createEdition(0n, 100n, 10n)).wait();
    service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: { BLOCK_POLL_MS: "100", LOG_LEVEL: "warn" } });
    api = new ApiClient(service.url);
    chainId = (await provider.getNetwork()).chainId.toString();
  });

  after(async function () {
    this.timeout(60_000);
    provider?.destroy();
    await service?.stop();
    await node?.stop();
  });

  const put = (json: unknown) => api.request("PUT", `/collections/${address}/metadata`, { json, headers: ROOT_KEY });
  const served = (id: number, suffix = ".json") => api.get(`/metadata/${chainId}/${address}/${id}${suffix}`);

  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
    for (const deadline = Date.now() + timeoutMs; ; await sleep(100)) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    }
  }

  it("stores documents per edition id and serves each minted edition its own document, not the placeholder; 404 before a token of it exists", async function () {
    this.timeout(120_000);
    const tokens = [1, 2, 3].map((n) => ({ tokenId: String(n), ...documentOf(n) }));
    const res = await put({ placeholder: PLACEHOLDER, tokens });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ count: 3, stored: 3, placeholder: true });
    await (await editions.mint(1n, 2n)).wait();
    await (await editions.mintForFree(2n, 1n, owner.address)).wait();

    for (const id of [1, 2]) {
      const r = await served(id);
      expect(r.status, r.text).to.equal(200);
      expect(r.text).to.equal(canonicalize(documentOf(id)));
      expect(r.headers.get("cache-control")).to.equal("public, max-age=60");
      expect(r.headers.get("etag")).to.be.a("string");
    }
    expect((await served(2, "")).text).to.equal(canonicalize(documentOf(2)));
    const unminted = await served(3);
    expect(unminted.status, unminted.text).to.equal(404);
    expect(unminted.body.error.code).to.equal("TOKEN_NOT_FOUND");
    expect(unminted.text).to.not.include("Tier3");
    // An edition that does not exist has no token either.
    expect((await served(9)).body.error.code).to.equal("TOKEN_NOT_FOUND");

    // Once edition 3 has a token, its document is served (the unminted answer is not kept past a moment).
    await (await editions.mint(3n, 1n)).wait();
    const third = await until("edition 3 to be served", async () => {
      const r = await served(3);
      return r.status === 200 ? r : undefined;
    });
    expect(third.text).to.equal(canonicalize(documentOf(3)));

    // The state: an edition contract, nothing hidden, its documents listed.
    const state = await api.get(`/collections/${address}/metadata`);
    expect(state.status, state.text).to.equal(200);
    expect(state.body).to.include({ standard: "erc1155", state: "revealed", count: 3, provenance: null });
    expect(state.body.startingIndex).to.equal(null);
    expect((state.body.tokens as Array<{ tokenId: string }>).map((t) => t.tokenId)).to.deep.equal(["1", "2", "3"]);

    // A document replaced is served anew.
    const changed = { ...documentOf(1), name: "Edition #1, second state" };
    expect((await put({ tokens: [{ tokenId: 1, ...changed }] })).status).to.equal(200);
    expect((await served(1)).text).to.equal(canonicalize(changed));
  });

  it("has no commit and no reveal: 409 naming the standard, nothing sent, the documents still open to change", async function () {
    this.timeout(60_000);
    const nonce = await provider.getTransactionCount(owner.address);
    for (const [step, what] of [
      ["metadata/commit", "The metadata commit"],
      ["reveal", "The reveal"],
    ]) {
      const res = await api.post(`/collections/${address}/${step}`, { privateKey: owner.privateKey });
      expect(res.status, `${step}: ${res.text}`).to.equal(409);
      expect(res.body.error.code).to.equal("PROVENANCE_NOT_SET");
      expect(res.body.error.message).to.equal(
        `${what} has no reveal: ${address} is an ERC-1155 edition contract (its documents are served per edition id as uploaded, with no provenance to commit and nothing to reveal)`,
      );
    }
    expect(await provider.getTransactionCount(owner.address)).to.equal(nonce);
    const again = await put({ tokens: [{ tokenId: 2, ...documentOf(2) }] });
    expect(again.status, again.text).to.equal(200);
  });

  it("packs its documents, ids 1 to count, in a CAR at once (nothing waits for a reveal)", async function () {
    this.timeout(60_000);
    const car = await fetch(`${service.url}/collections/${address}/metadata.car`);
    expect(car.status).to.equal(200);
    const root = car.headers.get("x-root-cid");
    expect(root).to.match(/^bafy/);
    expect((await car.arrayBuffer()).byteLength).to.be.greaterThan(0);
    expect((await api.get(`/collections/${address}/metadata`)).body.rootCid).to.equal(root);
  });

  it("points the contract's uri(id) at the service (metadata/host): what a wallet reads there is the edition's document", async function () {
    this.timeout(60_000);
    const res = await api.post(`/collections/${address}/metadata/host`, { privateKey: owner.privateKey });
    expect(res.status, res.text).to.equal(200);
    const baseURI = `${service.url}/metadata/${chainId}/${address}/`;
    expect(res.body.baseURI).to.equal(baseURI);
    const uri = await editions.uri(2n);
    expect(uri).to.equal(`${baseURI}2.json`);
    const read = await fetch(uri);
    expect(read.status).to.equal(200);
    expect(await read.text()).to.equal(canonicalize(documentOf(2)));
  });
});
