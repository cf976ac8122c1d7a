import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { Wallet, concat, keccak256, type Contract, type JsonRpcProvider } from "ethers";
import canonicalize from "canonicalize";
import { DEFAULT_COLLECTION, deployTransaction } from "../../server/chain/collection";
import { importerOptions } from "../../server/metadata/car";
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
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";

const importEsm = new Function("s", "return import(s)") as (s: string) => Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const COUNT = 12;
/** A trait no placeholder holds: found in a response before the reveal, it leaked. */
const secretTrait = (n: number) => `SecretTrait${n}x`;
const documentOf = (n: number) => ({
  name: `Token #${n}`,
  description: "A test token",
  image: `ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/${n}.png`,
  background_color: "a1b2c3",
  attributes: [
    { trait_type: "Eyes", value: secretTrait(n) },
    { trait_type: "Level", value: n, display_type: "number" },
  ],
});
const PLACEHOLDER = { name: "Mystery", image: "ipfs://bafyplaceholder/hidden.png" };

let postgres: Promise<PostgresServer> | undefined;
after(async function () {
  this.timeout(60_000);
  if (postgres) await (await postgres).stop();
});

for (const kind of ["PGlite", "PostgreSQL"] as const) {
  describe(`Metadata on ${kind}: upload, serving, commit, reveal, CAR, tokenURI cache (real node, real contract)`, function () {
    let node: ChainNode;
    let provider: JsonRpcProvider;
    let service: ServiceProcess;
    let api: ApiClient;
    let owner: Wallet;
    let nft: Contract;
    let collection: string;
    let chainId: string;
    /** What the webhook endpoint received: each event's type and data. */
    const delivered: Array<{ type: string; data: Record<string, unknown> }> = [];
    let receiver: Server;

    before(async function () {
      this.timeout(400_000);
      node = await sharedNode();
      provider = directProvider(node.rpcUrl);
      owner = (await fundedWallet(provider)).connect(provider);
      const sent = await owner.sendTransaction(await deployTransaction({ ...DEFAULT_COLLECTION, cost: 0n }));
      const deployed = (await sent.wait())!;
      collection = deployed.contractAddress!;
      nft = collectionAt(collection, owner);
      let env: Record<string, string> = {};
      if (kind === "PostgreSQL") {
        postgres ??= startPostgresServer();
        env = { DATABASE_URL: await (await postgres).createDatabase() };
      }
      service = await ServiceProcess.start({
        rpcUrl: node.rpcUrl,
        env: { BLOCK_POLL_MS: "100", WEBHOOK_ALLOW_PRIVATE: "true", ...env },
      });
      api = new ApiClient(service.url);
      const res = await api.post("/collections", { address: collection, fromBlock: deployed.blockNumber }, ROOT_KEY);
      expect(res.status, res.text).to.equal(201);
      receiver = createServer((req, reply) => {
        let body = "";
        req.on("data", (chunk: Buffer) => (body += chunk.toString()));
        req.on("end", () => {
          delivered.push(JSON.parse(body) as { type: string; data: Record<string, unknown> });
          reply.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
      const hook = await api.post(
        "/webhooks",
        {
          url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
          events: ["collection.metadata_updated"],
        },
        ROOT_KEY,
      );
      expect(hook.status, hook.text).to.equal(201);
      chainId = (await provider.getNetwork()).chainId.toString();
    });

    after(async function () {
      this.timeout(60_000);
      provider?.destroy();
      receiver?.close();
      await service?.stop();
    });

    const put = (json: unknown) =>
      api.request("PUT", `/collections/${collection}/metadata`, { json, headers: ROOT_KEY });
    const served = (token: number, suffix = ".json") => api.get(`/metadata/${chainId}/${collection}/${token}${suffix}`);

    async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
      for (const deadline = Date.now() + timeoutMs; ; await sleep(100)) {
        const value = await probe();
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      }
    }

    it("refuses an upload naming every bad token in one 400, and stores nothing of it", async function () {
      this.timeout(60_000);
      const tokens = [1, 2, 3, 4, 5, 6].map((n) => ({ tokenId: String(n), ...documentOf(n) }));
      (tokens[1] as Record<string, unknown>).image = "javascript:alert(1)";
      (tokens[2] as Record<string, unknown>).background_color = "#zzzzzz";
      (tokens[3] as Record<string, unknown>).attributes = [{ trait_type: "Eyes", value: { nested: true } }];
      (tokens[4] as Record<string, unknown>).description = "x".repeat(17 * 1024);
      (tokens[5] as Record<string, unknown>).name = 42;
      const res = await put({ placeholder: PLACEHOLDER, tokens });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.error.code).to.equal("VALIDATION_ERROR");
      const paths = (res.body.error.details as Array<{ path: string }>).map((d) => d.path);
      expect(paths).to.include.members([
        "tokens.1.image",
        "tokens.2.background_color",
        "tokens.3.attributes.0.value",
        "tokens.4",
        "tokens.5.name",
      ]);
      // In the words every other route uses, not zod's own.
      expect(res.body.error.details).to.deep.include({
        path: "tokens.5.name",
        message: "must be a string, not a number",
      });
      expect(paths.some((p) => p.startsWith("tokens.0"))).to.equal(false);
      const state = await api.request("GET", `/collections/${collection}/metadata`, { headers: ROOT_KEY });
      expect(state.status, state.text).to.equal(200);
      expect(state.body.count).to.equal(0);
      expect(state.body.placeholder).to.equal(null);
    });

    it("needs an access key with nft:configure to upload", async function () {
      const res = await api.request("PUT", `/collections/${collection}/metadata`, {
        json: { placeholder: PLACEHOLDER },
      });
      expect(res.status, res.text).to.equal(401);
    });

    it("serves the placeholder to minted tokens only before the reveal, and no trait of any token anywhere", async function () {
      this.timeout(120_000);
      const tokens = Array.from({ length: COUNT }, (_, i) => ({ tokenId: i + 1, ...documentOf(i + 1) }));
      const res = await put({ placeholder: PLACEHOLDER, tokens });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.count).to.equal(COUNT);
      await (await nft.mintForFree(5, owner.address)).wait();
      const first = await until("token 1 to be minted in the index", async () => {
        const r = await served(1);
        return r.status === 200 ? r : undefined;
      });
      expect(first.text).to.equal(canonicalize(PLACEHOLDER));
      expect(first.headers.get("cache-control")).to.equal("public, max-age=60");
      expect(first.headers.get("etag")).to.be.a("string");
      expect(first.headers.get("content-type")).to.match(/^application\/json/);
      const bare = await served(5, "");
      expect(bare.status, bare.text).to.equal(200);
      expect(bare.text).to.equal(canonicalize(PLACEHOLDER));
      const unminted = await served(6);
      expect(unminted.status, unminted.text).to.equal(404);
      expect(unminted.body.error.code).to.equal("TOKEN_NOT_FOUND");
      const open = await api.get(`/collections/${collection}/metadata`);
      expect(open.status, open.text).to.equal(200);
      expect(open.body.state).to.equal("hidden");
      expect(open.body.tokens).to.equal(undefined);
      const car = await api.get(`/collections/${collection}/metadata.car`);
      expect(car.status, car.text).to.equal(409);
      expect(car.body.error.code).to.equal("METADATA_NOT_REVEALED");
      for (const text of api.responseTexts)
        for (let n = 1; n <= COUNT; n++) expect(text).to.not.include(secretTrait(n));
    });

    it("refuses the reveal before the commit: 409 PROVENANCE_NOT_SET", async function () {
      this.timeout(60_000);
      const res = await api.post(`/collections/${collection}/reveal`, { privateKey: owner.privateKey });
      expect(res.status, res.text).to.equal(409);
      expect(res.body.error.code).to.equal("PROVENANCE_NOT_SET");
    });

    it("commits the provenance on chain through the engine (idempotent), then freezes the documents", async function () {
      this.timeout(120_000);
      const other = (await fundedWallet(provider)).connect(provider);
      const refused = await api.post(`/collections/${collection}/metadata/commit`, { privateKey: other.privateKey });
      expect(refused.status, refused.text).to.equal(403);
      expect(refused.body.error.code).to.equal("NOT_CONTRACT_OWNER");
      const headers = { "Idempotency-Key": "commit-1" };
      const res = await api.post(
        `/collections/${collection}/metadata/commit`,
        { privateKey: owner.privateKey },
        headers,
      );
      expect(res.status, res.text).to.equal(200);
      expect(res.body.operationId).to.be.a("string");
      const again = await api.post(
        `/collections/${collection}/metadata/commit`,
        { privateKey: owner.privateKey },
        headers,
      );
      expect(again.status).to.equal(200);
      expect(again.headers.get("idempotent-replayed")).to.equal("true");
      expect(again.text).to.equal(res.text);
      const expected = keccak256(
        concat(Array.from({ length: COUNT }, (_, i) => keccak256(Buffer.from(canonicalize(documentOf(i + 1))!)))),
      );
      expect(res.body.provenance).to.equal(expected);
      expect(await nft.provenance()).to.equal(expected);
      expect(await nft.provenanceCount()).to.equal(BigInt(COUNT));
      const late = await put({ tokens: [{ tokenId: 1, ...documentOf(99) }] });
      expect(late.status, late.text).to.equal(409);
      expect(late.body.error.code).to.equal("METADATA_FROZEN");
      const state = await api.get(`/collections/${collection}/metadata`);
      expect(state.body.state).to.equal("committed");
      expect(state.body.provenance).to.equal(expected);
      // The commit fixed the reveal block REVEAL_DELAY_BLOCKS (5) after its own.
      expect(state.body.revealBlock).to.equal(String((res.body.blockNumber as number) + 5));
      expect(await nft.revealBlock()).to.equal(BigInt(state.body.revealBlock as string));
    });

    it("reveals: every minted token serves the uploaded document at the shifted index; the provenance checks from the served bytes", async function () {
      this.timeout(120_000);
      const revealBlock = await nft.revealBlock();
      const early = await api.post(`/collections/${collection}/reveal`, { privateKey: owner.privateKey });
      expect(early.status, early.text).to.equal(409);
      expect(early.body.error.code).to.equal("REVEAL_TOO_EARLY");
      // The reveal is simulated on the latest block: it passes once a block follows the reveal block.
      const head = BigInt(await provider.getBlockNumber());
      await provider.send("hardhat_mine", [`0x${(revealBlock + 1n - head).toString(16)}`]);
      const res = await api.post(`/collections/${collection}/reveal`, { privateKey: owner.privateKey });
      expect(res.status, res.text).to.equal(200);
      const startingIndex = await nft.startingIndex();
      expect(res.body.startingIndex).to.equal(startingIndex.toString());
      expect(startingIndex).to.equal(BigInt((await provider.getBlock(Number(revealBlock)))!.hash!) % BigInt(COUNT));
      expect(startingIndex < BigInt(COUNT)).to.equal(true);
      await (await nft.mintForFree(COUNT - 5, owner.address)).wait();
      const servedBytes: string[] = [];
      for (let t = 1; t <= COUNT; t++) {
        const r = await until(`token ${t}`, async () => {
          const got = await served(t);
          return got.status === 200 ? got : undefined;
        });
        const uploaded = Number(((BigInt(t) - 1n + startingIndex) % BigInt(COUNT)) + 1n);
        expect(r.text, `token ${t}`).to.equal(canonicalize(documentOf(uploaded)));
        servedBytes[uploaded - 1] = r.text;
      }
      // A buyer's check: the documents in upload order (undo the shift), hashed, equal the chain's provenance.
      const recomputed = keccak256(concat(servedBytes.map((text) => keccak256(Buffer.from(text)))));
      expect(recomputed).to.equal(await nft.provenance());
      const state = await api.get(`/collections/${collection}/metadata`);
      expect(state.body.state).to.equal("revealed");
      expect(state.body.startingIndex).to.equal(startingIndex.toString());
      const again = await api.post(`/collections/${collection}/reveal`, { privateKey: owner.privateKey });
      expect(again.status, again.text).to.equal(200);
      expect(again.body.changed).to.equal(false);
    });

    it("packages the revealed documents as a CAR whose root and files read back, and the importer alone finds the same root", async function () {
      this.timeout(120_000);
      const res = await fetch(`${service.url}/collections/${collection}/metadata.car`);
      expect(res.status).to.equal(200);
      const root = res.headers.get("x-root-cid")!;
      expect(root).to.match(/^baf/);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const { CarReader } = await importEsm("@ipld/car");
      const { exporter } = await importEsm("ipfs-unixfs-exporter");
      const { importer } = await importEsm("ipfs-unixfs-importer");
      const { MemoryBlockstore } = await importEsm("blockstore-core/memory");
      const reader = await CarReader.fromBytes(bytes);
      const [header] = await reader.getRoots();
      expect(header.toString()).to.equal(root);
      const blockstore = new MemoryBlockstore();
      for await (const block of reader.blocks()) await blockstore.put(block.cid, block.bytes);
      const dir = await exporter(root, blockstore);
      expect(dir.type).to.equal("directory");
      const names: string[] = [];
      for await (const listed of dir.entries()) {
        names.push(listed.name);
        const entry = await exporter(listed.cid, blockstore);
        const chunks: Uint8Array[] = [];
        for await (const chunk of entry.content()) chunks.push(chunk);
        const token = Number(listed.name.replace(".json", ""));
        const servedText = (await served(token)).text;
        expect(Buffer.concat(chunks).toString(), listed.name).to.equal(servedText);
      }
      expect(names.sort()).to.deep.equal(Array.from({ length: COUNT }, (_, i) => `${i + 1}.json`).sort());
      const files = [];
      for (let t = 1; t <= COUNT; t++) files.push({ path: `${t}.json`, content: Buffer.from((await served(t)).text) });
      let again;
      for await (const entry of importer(files, new MemoryBlockstore(), await importerOptions())) again = entry.cid;
      expect(again.toString()).to.equal(root);
      const state = await api.get(`/collections/${collection}/metadata`);
      expect(state.body.rootCid).to.equal(root);
    });

    it("tokenURI shows a setBaseURI through the API at once, and one sent straight to the chain once the index reads it", async function () {
      this.timeout(120_000);
      const read = async () => {
        const r = await api.post("/nft/tokenURI", {
          privateKey: owner.privateKey,
          contractAddress: collection,
          tokenId: "3",
        });
        expect(r.status, r.text).to.equal(200);
        return r.body.tokenURI as string;
      };
      await read();
      const set = await api.post("/nft/setBaseURI", {
        privateKey: owner.privateKey,
        contractAddress: collection,
        baseURI: "https://example.com/a/",
      });
      expect(set.status, set.text).to.equal(200);
      expect(await read()).to.equal("https://example.com/a/3.json");
      await (await nft.setBaseURI("https://example.com/b/")).wait();
      await until("the index to read the BatchMetadataUpdate", async () =>
        (await read()) === "https://example.com/b/3.json" ? true : undefined,
      );
      // The index's ERC-4906 events reach the webhook: the reveal's, the API's setBaseURI and the direct one.
      const updates = await until("collection.metadata_updated deliveries", async () => {
        const seen = delivered.filter((e) => e.type === "collection.metadata_updated");
        return seen.length >= 3 ? seen : undefined;
      });
      expect(updates[updates.length - 1].data).to.deep.include({
        chainId,
        address: collection,
        fromTokenId: "1",
        toTokenId: (2n ** 256n - 1n).toString(),
      });
      const host = await api.post(`/collections/${collection}/metadata/host`, { privateKey: owner.privateKey });
      expect(host.status, host.text).to.equal(200);
      expect(host.body.baseURI).to.equal(`${service.url}/metadata/${chainId}/${collection}/`);
      const uri = await read();
      expect(uri).to.equal(`${service.url}/metadata/${chainId}/${collection}/3.json`);
      const doc = await fetch(uri);
      expect(doc.status).to.equal(200);
    });
  });
}
