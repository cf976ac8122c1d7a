/**
 * Issue 47's findings on jobs, through HTTP to a service on PGlite: bodies past their cap, broken
 * CSV lines, a first row taken for a header, JSON lists past the row cap, a wallet out of a key's
 * reach, event streams per key, and a cancel racing a slow broadcast (an RPC proxy in front of the node).
 */
import { existsSync, readFileSync, renameSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { expect } from "chai";
import { Wallet, type JsonRpcProvider } from "ethers";
import {
  ApiClient,
  ChainNode,
  collectionAt,
  deployDirectly,
  DEV_KEYS,
  directProvider,
  ServiceProcess,
  sleep,
  type JsonBody,
} from "../api/harness";
import { sharedNode } from "../support/shared-node";
import { RpcProxy } from "../support/rpc-proxy";
import type { SoftHsmToken } from "../support/softhsm";
import { fund, KeyedClient, newMasterKey, ROOT_AUTH, tokenWithKey, walletEnv } from "../wallets/fixture";
import { csvOf, randomAddress, recipientRows, transferOwnership, waitForJob } from "./fixture";

/** The service's resident memory (its node process, from /proc), in MB. */
function rssMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match![1]) / 1024;
}

interface Answer {
  status: number;
  body: string;
  /** When the answer's head came, after the request started (ms). */
  ms: number;
}

/**
 * POSTs `url` with `Transfer-Encoding: chunked` (no Content-Length): `chunks` chunks from `next`, as
 * fast as the connection takes them, going on after the answer for as long as the server reads
 * (`keepWriting`), or, with `end: false`, the chunks and then nothing more (the body never ends).
 * Resolves with the answer, or null if none came within `waitMs`, once the writing is over too;
 * `written` says how many bytes the connection took.
 */
function chunkedPost(
  url: string,
  headers: Record<string, string>,
  next: (i: number) => Buffer,
  opts: { chunks: number; end?: boolean; keepWriting?: boolean; waitMs: number },
): Promise<{ answer: Answer | null; written: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    let written = 0;
    let answer: Answer | null = null;
    let answered = false;
    let writing = true;
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ answer, written });
    };
    const maybeSettle = () => {
      if (answer && (!writing || !opts.keepWriting)) settle();
    };
    const timer = setTimeout(settle, opts.waitMs);
    const req = httpRequest(url, { method: "POST", headers }, (res) => {
      answered = true;
      const ms = Date.now() - started;
      let body = "";
      res.setEncoding("utf8").on("data", (c: string) => (body += c));
      const done = () => {
        answer = { status: res.statusCode!, body, ms };
        maybeSettle();
      };
      res.on("end", done).on("error", done);
    });
    // The server closing the connection while we write is what a cut-off looks like.
    req.on("error", () => {
      writing = false;
      if (!answered) settle();
      else maybeSettle();
    });
    let i = 0;
    const pump = () => {
      while (writing && !settled && (!answered || opts.keepWriting) && i < opts.chunks) {
        const chunk = next(i++);
        written += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (i >= opts.chunks && opts.end !== false && writing) {
        req.end(() => {
          writing = false;
          maybeSettle();
        });
      } else if (answered && !opts.keepWriting) writing = false;
    };
    pump();
  });
}

describe("jobs hardened (issue 47): bodies, broken lines, headers, row caps, wallets out of reach, event streams, cancel (PGlite, a proxy)", function () {
  this.timeout(240_000);
  let node: ChainNode;
  let proxy: RpcProxy;
  let provider: JsonRpcProvider;
  let hsm: SoftHsmToken;
  let service: ServiceProcess;
  let root: KeyedClient;
  let treasury: string;
  /** Owned by the treasury wallet. */
  let collection: string;
  let deployer: Wallet;

  const jobsUrl = (query: Record<string, string>) => `${service.url}/jobs?${new URLSearchParams(query)}`;
  const airdrop = (extra: Record<string, string> = {}) => ({
    kind: "airdrop",
    contractAddress: collection,
    from: "treasury",
    ...extra,
  });
  const csvPost = (csv: string, query: Record<string, string>, auth: Record<string, string> = ROOT_AUTH) =>
    root.api.request("POST", `/jobs?${new URLSearchParams(query)}`, {
      raw: csv,
      headers: { ...auth, "content-type": "text/csv" },
    });
  /** A new access key: its secret and id. */
  const newKey = async (grant: Record<string, unknown>) => {
    const res = await root.post("/access-keys", { name: `k-${Date.now()}`, ...grant });
    expect(res.status, res.text).to.equal(201);
    return { key: res.body.key as string, id: res.body.id as string };
  };

  before(async function () {
    this.timeout(240_000);
    let keyAddress: string;
    [node, { hsm, keyAddress }] = await Promise.all([sharedNode(), tokenWithKey("jobs-hsm-key")]);
    proxy = await RpcProxy.start(node.rpcUrl);
    provider = directProvider(node.rpcUrl);
    deployer = new Wallet(DEV_KEYS[0], provider);
    collection = await deployDirectly(deployer, { maxSupply: 100_000n });
    service = await ServiceProcess.start({
      rpcUrl: proxy.url,
      env: walletEnv(newMasterKey(), hsm, {
        BLOCK_POLL_MS: "100",
        LOG_LEVEL: "warn",
        // The cancel's test holds one eth_estimateGas for 33 s: the service must wait for it.
        RPC_TIMEOUT_MS: "60000",
      }),
    });
    root = new KeyedClient(new ApiClient(service.url));
    treasury = (await root.createWallet({ kind: "local", label: "treasury" })).address as string;
    await fund(provider, treasury, 10_000n * 10n ** 18n);
    await transferOwnership(deployer, collection, treasury);
    const held = await root.createWallet({ kind: "pkcs11", label: "jobs-hsm", keyLabel: "jobs-hsm-key" });
    expect(held.address).to.equal(keyAddress);
    await fund(provider, keyAddress);
  });

  after(async function () {
    this.timeout(30_000);
    if (hsm && existsSync(`${hsm.tokenDir}.away`)) renameSync(`${hsm.tokenDir}.away`, hsm.tokenDir);
    provider?.destroy();
    await service?.stop();
    await proxy?.close();
    hsm?.remove();
  });

  describe("bodies past their cap (finding 1)", function () {
    for (const first of ["good rows", "a broken first line"]) {
      it(`a 200 MB chunked CSV (${first}): 400 naming the 10 MB limit once the cap is passed, the rest never read, RSS flat`, async () => {
        const line = Buffer.from(`${randomAddress()},1\n`);
        const chunk = Buffer.concat(Array.from({ length: Math.ceil(65_536 / line.length) }, () => line));
        const head = Buffer.concat([Buffer.from(`"${randomAddress()}"x,1\n`), chunk]);
        const chunks = Math.ceil((200 * 1024 * 1024) / chunk.length);
        const rssBefore = rssMb(service.pid);
        let rssPeak = rssBefore;
        const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(service.pid))), 50);
        const { answer, written } = await chunkedPost(
          jobsUrl(airdrop({ dryRun: "true" })),
          { ...ROOT_AUTH, "content-type": "text/csv" },
          (i) => (i === 0 && first !== "good rows" ? head : chunk),
          { chunks, keepWriting: true, waitMs: 90_000 },
        ).finally(() => clearInterval(sampler));
        rssPeak = Math.max(rssPeak, rssMb(service.pid));
        console.log(
          `      200 MB chunked, ${first}: answered in ${answer?.ms} ms after ${(written / 1024 / 1024).toFixed(1)} MB written; RSS ${rssBefore.toFixed(0)} → peak ${rssPeak.toFixed(0)} MB`,
        );
        expect(answer, "an answer").to.not.equal(null);
        expect(answer!.status, answer!.body).to.equal(400);
        const error = JSON.parse(answer!.body).error;
        expect(error.code).to.equal("VALIDATION_ERROR");
        expect(error.message).to.include("10 MB");
        expect(error.details).to.deep.equal([{ path: "(body)", message: "too large" }]);
        // Measured (2 cores, load 13-18): 13.1-14.5 MB written (10 MB and the sockets' buffers), answered
        // in 1.6-2.9 s, RSS +36-48 MB. e8f77f8: 11-19 s, RSS +156-187 MB, all 200 MB read after a broken first line.
        expect(written / 1024 / 1024).to.be.lessThan(30);
        expect(answer!.ms).to.be.lessThan(10_000);
        expect(rssPeak - rssBefore).to.be.lessThan(150);
      });
    }

    it("a JSON body past 10 MB, chunked: 400 naming the limit, the rest never read", async () => {
      const head = Buffer.from(`{"kind":"airdrop","contractAddress":"${collection}","from":"treasury","recipients":[`);
      const item = Buffer.from(`{"address":"${randomAddress()}","amount":1},`);
      const chunk = Buffer.concat(Array.from({ length: Math.ceil(65_536 / item.length) }, () => item));
      const { answer, written } = await chunkedPost(
        `${service.url}/jobs`,
        { ...ROOT_AUTH, "content-type": "application/json" },
        (i) => (i === 0 ? head : chunk),
        { chunks: Math.ceil((100 * 1024 * 1024) / chunk.length), keepWriting: true, waitMs: 90_000 },
      );
      expect(answer, "an answer").to.not.equal(null);
      expect(answer!.status, answer!.body).to.equal(400);
      expect(JSON.parse(answer!.body).error.message).to.include("10 MB");
      expect(written / 1024 / 1024).to.be.lessThan(30);
    });

    it("checks the key's scope, collection and wallet before reading the body: the answer comes while the body is still open", async () => {
      const elsewhere = await deployDirectly(deployer, { maxSupply: 10n });
      const rowsOnly = (i: number) => Buffer.from(i === 0 ? "address,amount\n" : `${randomAddress()},1\n`);
      const open = (key: string) =>
        chunkedPost(jobsUrl(airdrop()), { Authorization: `Bearer ${key}`, "content-type": "text/csv" }, rowsOnly, {
          chunks: 10,
          end: false,
          waitMs: 5_000,
        });
      const noScope = await newKey({ scopes: ["nft:configure"] });
      const otherCollection = await newKey({ scopes: ["nft:mintForFree"], collections: [elsewhere] });
      const otherWallet = await newKey({ scopes: ["nft:mintForFree"], wallets: [randomAddress()] });
      const answers = await Promise.all([open(noScope.key), open(otherCollection.key), open(otherWallet.key)]);
      expect(answers.map(({ answer }) => answer && [answer.status, JSON.parse(answer.body).error.code])).to.deep.equal([
        [403, "FORBIDDEN"],
        [403, "FORBIDDEN"],
        [404, "WALLET_NOT_FOUND"],
      ]);
    });
  });

  describe("broken CSV lines (finding 2)", function () {
    it("20,000 broken lines (2 MB) are read in one pass: 400 naming the first 1,000 and counting 19,000 more", async () => {
      const lines = ["address,amount"];
      for (let i = 0; i < 20_000; i++) lines.push(`"${randomAddress()}"x,1`);
      lines.push(`${randomAddress()},1`);
      const started = Date.now();
      const res = await csvPost(`${lines.join("\n")}\n`, airdrop({ dryRun: "true" }));
      const ms = Date.now() - started;
      console.log(`      20,000 broken lines refused in ${ms} ms`);
      expect(res.status, res.text.slice(0, 300)).to.equal(400);
      expect(res.body.error.code).to.equal("VALIDATION_ERROR");
      const details = res.body.error.details as JsonBody[];
      expect(details).to.have.length(1_000);
      expect(details[0].path).to.equal("row 2");
      expect(details[999].path).to.equal("row 1001");
      expect(res.body.error.message).to.match(/^20000 bad rows: /);
      expect(res.body.error.message).to.include("19000 more not listed");
      // Measured (2 cores, load 15-18): 444-507 ms. e8f77f8: 278 s.
      expect(ms).to.be.lessThan(5_000);
    });
  });

  describe("a first row without 0x (finding 12, CSV header)", function () {
    it("is data, not a header: 400 naming row 1; a header is a row of column names alone", async () => {
      const rows = recipientRows(3);
      const body = rows.map(([a, n]) => `${a},${n}`).join("\n");
      for (const first of ["wallet,qty", `${rows[0][0].slice(2)},1`, "holders"]) {
        const res = await csvPost(`${first}\n${body}\n`, airdrop({ dryRun: "true" }));
        expect(res.status, `${first}: ${res.text}`).to.equal(400);
        expect((res.body.error.details as JsonBody[]).map((d) => d.path)).to.deep.equal(["row 1"]);
      }
      for (const header of ["address,amount", "Address, Amount", "ADDRESS"]) {
        const res = await csvPost(`${header}\n${body}\n`, airdrop({ dryRun: "true" }));
        expect(res.status, `${header}: ${res.text}`).to.equal(200);
        expect(res.body.rows).to.equal(3);
      }
      const none = await csvPost(`${body}\n`, airdrop({ dryRun: "true" }));
      expect(none.status, none.text).to.equal(200);
      expect(none.body.rows).to.equal(3);
    });
  });

  describe("the JSON row cap (finding 11)", function () {
    it("a 10 MB array of bare numbers is refused on its length, before it is parsed", async () => {
      const numbers = `[${Array.from({ length: 5_000_000 }, (_, i) => i % 10).join(",")}]`;
      const body = `{"kind":"airdrop","contractAddress":"${collection}","from":"treasury","recipients":${numbers}}`;
      const started = Date.now();
      const res = await root.api.request("POST", "/jobs", { raw: body, headers: ROOT_AUTH });
      const ms = Date.now() - started;
      console.log(`      ${(body.length / 1024 / 1024).toFixed(1)} MB of bare numbers refused in ${ms} ms`);
      expect(res.status, res.text.slice(0, 300)).to.equal(400);
      expect(res.body.error.details).to.have.length(1);
      expect(res.body.error.details[0].message).to.match(/^at most 100000 rows; this list has \d+$/);
      // Measured (2 cores, load 13-18): 650-739 ms, the 9.5 MB upload included. e8f77f8: 20.6 s.
      expect(ms).to.be.lessThan(2_500);
    });
  });

  describe("a wallet out of the key's reach (finding 9)", function () {
    it("is 404 WALLET_NOT_FOUND even when its PKCS#11 token is absent (never 503, which would say it exists)", async () => {
      const limited = await newKey({ scopes: ["nft:mintForFree"], wallets: [treasury] });
      const body = {
        kind: "airdrop",
        contractAddress: collection,
        from: "jobs-hsm",
        recipients: [{ address: randomAddress(), amount: 1 }],
      };
      renameSync(hsm.tokenDir, `${hsm.tokenDir}.away`);
      try {
        // What a request that reaches its signer hears now (a write by the root key): the token is gone.
        const mint = await root.post("/nft/mint", { from: "jobs-hsm", contractAddress: collection, mintAmount: 1 });
        expect(mint.status, mint.text).to.equal(503);
        expect(mint.body.error.code).to.equal("SIGNER_UNAVAILABLE");
        const json = await root.as(limited.key).post("/jobs", body);
        expect(json.status, json.text).to.equal(404);
        expect(json.body.error.code).to.equal("WALLET_NOT_FOUND");
        const csv = await csvPost(`${randomAddress()},1\n`, airdrop({ from: "jobs-hsm" }), {
          Authorization: `Bearer ${limited.key}`,
        });
        expect(csv.status, csv.text).to.equal(404);
        expect(csv.body.error.code).to.equal("WALLET_NOT_FOUND");
      } finally {
        renameSync(`${hsm.tokenDir}.away`, hsm.tokenDir);
      }
    });
  });

  describe("job event streams (finding 5)", function () {
    /** An open event stream: its status, and when it ended (null while open). */
    interface OpenStream {
      status: number;
      ended: Promise<number>;
      close(): void;
    }
    const openStream = async (id: string, key: string): Promise<OpenStream> => {
      const abort = new AbortController();
      const res = await fetch(`${service.url}/jobs/${id}/events`, {
        headers: { Authorization: `Bearer ${key}` },
        signal: abort.signal,
      });
      const ended = (async () => {
        try {
          if (res.body) for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) void chunk;
        } catch {
          // aborted by us
        }
        return Date.now();
      })();
      return { status: res.status, ended, close: () => abort.abort() };
    };
    /** A job that pauses at once and stays paused: its wallet does not own the collection. */
    let paused: string;

    before(async function () {
      const other = await deployDirectly(deployer, { maxSupply: 100n });
      const res = await csvPost(csvOf(recipientRows(5)), airdrop({ contractAddress: other }));
      expect(res.status, res.text).to.equal(202);
      paused = res.body.jobId as string;
      await waitForJob(root, paused, ["paused"], 60_000);
    });

    it("at most 10 open per key: the 11th is 429 RATE_LIMITED, another key is not counted, one closed frees a place", async () => {
      const { key, id } = await newKey({ scopes: ["nft:read"] });
      const streams = await Promise.all(Array.from({ length: 10 }, () => openStream(paused, key)));
      expect(streams.map((s) => s.status)).to.deep.equal(Array(10).fill(200));
      const eleventh = await openStream(paused, key);
      expect(eleventh.status).to.equal(429);
      const other = await openStream(paused, (await newKey({ scopes: ["nft:read"] })).key);
      expect(other.status).to.equal(200);
      streams[0].close();
      let again = await openStream(paused, key);
      for (const until = Date.now() + 5_000; again.status === 429 && Date.now() < until;) {
        await sleep(100);
        again = await openStream(paused, key);
      }
      expect(again.status).to.equal(200);
      for (const s of [...streams, again, other]) s.close();
      await root.delete(`/access-keys/${id}`);
    });

    it("a revoked key's streams end within 2 s; an expired key's within 2 s of its expiry", async () => {
      const revoked = await newKey({ scopes: ["nft:read"] });
      const streams = await Promise.all(Array.from({ length: 5 }, () => openStream(paused, revoked.key)));
      expect(streams.map((s) => s.status)).to.deep.equal(Array(5).fill(200));
      await sleep(1_500);
      const deleted = await root.delete(`/access-keys/${revoked.id}`);
      expect(deleted.status, deleted.text).to.be.oneOf([200, 204]);
      const revokedAt = Date.now();
      const ends = await Promise.race([Promise.all(streams.map((s) => s.ended)), sleep(10_000).then(() => null)]);
      expect(ends, "the streams ended").to.not.equal(null);
      const afterRevoke = Math.max(...ends!) - revokedAt;

      const expiresAt = Date.now() + 3_000;
      const expiring = await newKey({ scopes: ["nft:read"], expiresAt: new Date(expiresAt).toISOString() });
      const stream = await openStream(paused, expiring.key);
      expect(stream.status).to.equal(200);
      const end = await Promise.race([stream.ended, sleep(13_000).then(() => null)]);
      expect(end, "the stream ended").to.not.equal(null);
      const afterExpiry = end! - expiresAt;
      console.log(`      streams ended ${afterRevoke} ms after the revocation, ${afterExpiry} ms after the expiry`);
      // Measured (2 cores, load 18-25): 215 ms after the revocation, 123 ms after the expiry (keys checked every 500 ms).
      expect(afterRevoke).to.be.lessThan(2_000);
      expect(afterExpiry).to.be.lessThan(2_000);
    });
  });

  describe("a cancel racing a slow batch (finding 8)", function () {
    it("a batch held 33 s between its claim and its broadcast is never broadcast once the cancel has answered", async () => {
      const rows = recipientRows(20);
      // The collection's gas model, measured now: the job's one eth_estimateGas to it is then its batch's.
      const dry = await csvPost(csvOf(rows), airdrop({ dryRun: "true" }));
      expect(dry.status, dry.text).to.equal(200);
      const supply = await collectionAt(collection, provider).totalSupply();
      const nonce = await provider.getTransactionCount(treasury, "pending");
      const toCollection = (params: readonly unknown[]) =>
        String((params[0] as { to?: string } | undefined)?.to ?? "").toLowerCase() === collection.toLowerCase();
      const held = proxy.delay("eth_estimateGas", 33_000, { when: toCollection });
      const made = await csvPost(csvOf(rows), airdrop());
      expect(made.status, made.text).to.equal(202);
      await held.done;
      const heldAt = Date.now();
      const cancelled = await root.post(`/jobs/${made.body.jobId}/cancel`, {});
      expect(cancelled.status, cancelled.text).to.equal(200);
      expect(cancelled.body.status).to.equal("cancelled");
      const nonceAtAnswer = await provider.getTransactionCount(treasury, "pending");
      console.log(`      cancel answered ${Date.now() - heldAt} ms into the 33 s hold`);
      // The held simulation is answered at 33 s; the batch would be signed and sent right after.
      await sleep(Math.max(0, heldAt + 33_000 - Date.now()) + 5_000);
      expect(await provider.getTransactionCount(treasury, "pending")).to.equal(nonceAtAnswer);
      expect(nonceAtAnswer).to.equal(nonce);
      expect(await collectionAt(collection, provider).totalSupply()).to.equal(supply);
      const job = await waitForJob(root, made.body.jobId as string, ["cancelled"]);
      expect((job.batches as JsonBody[]).map((b) => b.status)).to.deep.equal(["cancelled"]);
    });
  });
});
