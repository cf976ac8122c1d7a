/**
 * Issue 31: SIGKILLs in the middle of bursts of keyed writes, then replays. Whatever the crash
 * point, every key's writes end confirmed, exactly once, without a nonce left waiting forever.
 */
import { rmSync, writeFileSync } from "node:fs";
import { expect } from "chai";
import { Wallet } from "ethers";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  TEST_API_KEY,
  collectionAt,
  deployWithScript,
  directProvider,
  sleep,
  type ApiResponse,
} from "../api/harness";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";
import { seededRandom as seeded } from "../support/seeded-random";
import { seededDataDir } from "../support/pglite-template";
import { replayUntilConfirmed, type KeyedWrite } from "../support/keyed-replay";
import { operationsSharingTransaction } from "./fixture";

const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 6);
const PER_ROUND = 80;
const KEYS = DEV_KEYS.slice(6, 10).map((key) => new Wallet(key));

for (const store of (process.env.CRASH_STORES ?? "pglite,postgres").split(",")) {
  describe(`SIGKILLs in the middle of bursts of keyed mints (${store}, automining node)`, function () {
    this.timeout(300_000);
    let node: ChainNode;
    let collection: string;
    let dataDir: string;
    let pg: PostgresServer | undefined;
    let env: Record<string, string>;

    before(async function () {
      node = await ChainNode.start();
      collection = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "100000", NFT_MAX_MINT_PER_TX: "5" });
      dataDir = await seededDataDir("crash-burst-");
      env = { DATA_DIR: dataDir, TX_TIMEOUT_MS: "5000", BLOCK_POLL_MS: "200" };
      if (store === "postgres") {
        pg = await startPostgresServer();
        env.DATABASE_URL = await pg.createDatabase();
      }
    });

    after(async function () {
      await node?.stop();
      await pg?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it(`${ROUNDS} kills at random moments: supply grows by exactly the number of keys, every replay answers 200 within 60 s, no extra transactions`, async function () {
      const random = seeded(SEED);
      const provider = directProvider(node.rpcUrl);
      const nft = collectionAt(collection, provider);
      const supplyBefore = (await nft.totalSupply()) as bigint;
      const noncesBefore = await Promise.all(KEYS.map((k) => provider.getTransactionCount(k.address)));
      const sent: KeyedWrite[] = [];
      try {
        for (let round = 0; round < ROUNDS; round++) {
          const service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
          const api = new ApiClient(service.url);
          const burst: Array<Promise<ApiResponse | null>> = [];
          for (let i = 0; i < PER_ROUND; i++) {
            const wallet = KEYS[i % KEYS.length];
            const item = {
              key: `r${round}-${i}`,
              body: { privateKey: wallet.privateKey, contractAddress: collection, mintAmount: 1 },
            };
            sent.push(item);
            burst.push(api.post("/nft/mint", item.body, { "Idempotency-Key": item.key }).catch(() => null));
          }
          await sleep(200 + Math.floor(random() * 1500));
          await service.kill();
          await Promise.all(burst);
        }
        const service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
        try {
          await replayUntilConfirmed(new ApiClient(service.url), sent);
          const supplyAfter = (await nft.totalSupply()) as bigint;
          expect(supplyAfter - supplyBefore).to.equal(BigInt(sent.length));
          const noncesAfter = await Promise.all(KEYS.map((k) => provider.getTransactionCount(k.address)));
          const transactions = noncesAfter.reduce((sum, n, i) => sum + (n - noncesBefore[i]), 0);
          const fills = transactions - sent.length;
          expect(fills, "transactions beyond one per key are nonce fills").to.be.at.least(0);
          expect(fills).to.be.at.most(sent.length);
          // Issue 51: no two operations of the store answered with one transaction (or one mined nonce).
          expect(await operationsSharingTransaction(new ApiClient(service.url))).to.equal(0);
        } catch (err) {
          if (process.env.CRASH_LOG) writeFileSync(process.env.CRASH_LOG, service.output());
          throw err;
        } finally {
          await service.stop();
        }
      } catch (err) {
        (err as Error).message += ` (CRASH_SEED=${SEED})`;
        throw err;
      } finally {
        provider.destroy();
      }
    });
  });
}

describe("SIGKILLs in the middle of bursts of mints from wallets the service holds, and no request afterwards (PGlite, automining node)", function () {
  this.timeout(300_000);

  it(`${ROUNDS} kills at random moments: every operation ends confirmed or failed with no request after the last restart, and no nonce is left waiting`, async function () {
    const random = seeded(SEED + 1);
    const node = await ChainNode.start();
    const dataDir = await seededDataDir("crash-burst-from-");
    const provider = directProvider(node.rpcUrl);
    const env = { DATA_DIR: dataDir, TX_TIMEOUT_MS: "5000", BLOCK_POLL_MS: "200", WALLET_MASTER_KEY: "11".repeat(32) };
    const root = { Authorization: `Bearer ${TEST_API_KEY}` };
    try {
      const collection = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "100000", NFT_MAX_MINT_PER_TX: "5" });
      const nft = collectionAt(collection, provider);
      const supplyBefore = (await nft.totalSupply()) as bigint;
      let service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
      const wallets: string[] = [];
      for (const label of ["drop-a", "drop-b"]) {
        const made = await new ApiClient(service.url).post("/wallets", { kind: "local", label }, root);
        expect(made.status, made.text).to.equal(201);
        wallets.push(made.body.address as string);
        await provider.send("hardhat_setBalance", [made.body.address, `0x${(10n ** 20n).toString(16)}`]);
      }
      let sent = 0;
      for (let round = 0; round < ROUNDS; round++) {
        if (round > 0) service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
        const api = new ApiClient(service.url);
        const burst = Array.from({ length: PER_ROUND / 2 }, (_, i) =>
          api
            .post(
              "/nft/mint",
              { from: `drop-${i % 2 === 0 ? "a" : "b"}`, contractAddress: collection, mintAmount: 1 },
              root,
            )
            .catch(() => null),
        );
        sent += burst.length;
        await sleep(200 + Math.floor(random() * 1500));
        await service.kill();
        await Promise.all(burst);
      }
      service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
      try {
        const api = new ApiClient(service.url);
        const deadline = Date.now() + 60_000;
        for (;;) {
          const views = await Promise.all(wallets.map((w) => api.request("GET", `/wallets/${w}`, { headers: root })));
          const unfinished = views.reduce((sum, v) => sum + Number(v.body.unfinishedOperations), 0);
          if (unfinished === 0) break;
          if (Date.now() > deadline)
            throw new Error(`${unfinished} operations still unfinished 60 s after the last restart`);
          await sleep(500);
        }
        for (const w of wallets) {
          // Nothing waits in the node behind a gap: every nonce handed out is mined.
          expect(await provider.getTransactionCount(w, "pending")).to.equal(
            await provider.getTransactionCount(w, "latest"),
          );
        }
        const minted = ((await nft.totalSupply()) as bigint) - supplyBefore;
        expect(minted).to.be.at.most(BigInt(sent));
        expect(await operationsSharingTransaction(api)).to.equal(0);
        expect(minted, "at least the writes answered before the kills").to.be.greaterThan(0n);
      } finally {
        await service.stop();
      }
    } catch (err) {
      (err as Error).message += ` (CRASH_SEED=${SEED})`;
      throw err;
    } finally {
      provider.destroy();
      await node.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
