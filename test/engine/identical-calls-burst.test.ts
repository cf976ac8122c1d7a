/**
 * Issue 51, seeded and randomized, as the issue's run: one wallet the service holds sends the same
 * call (mint(1), to itself) under a new Idempotency-Key each time, in bursts cut by SIGKILLs; then
 * every key is replayed until it answers 200. Each key must have minted once, on a transaction of
 * its own: the supply grows by the number of keys, no two keys answer with one transactionHash,
 * and /metrics' operations_sharing_transaction stays 0. Each process's first follower re-sign
 * stalls a seeded while (CRASH_AT=resign-nonce-taken, CRASH_PAUSE_MS) between its new nonce and
 * its record, as a slow fee quote would: the window in which the issue's nonce went twice.
 *
 * Sized to run in about a minute; IDENTICAL_ROUNDS and IDENTICAL_PER_ROUND run it bigger
 * (CRASH_SEED repeats a run).
 */
import { rmSync, writeFileSync } from "node:fs";
import { expect } from "chai";
import {
  ApiClient,
  ChainNode,
  ServiceProcess,
  TEST_API_KEY,
  collectionAt,
  deployWithScript,
  directProvider,
  sleep,
  type ApiResponse,
  type JsonBody,
} from "../api/harness";
import { seededRandom as seeded } from "../support/seeded-random";
import { seededDataDir } from "../support/pglite-template";
import { operationsSharingTransaction } from "./fixture";

const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);
const ROUNDS = Number(process.env.IDENTICAL_ROUNDS ?? 5);
const PER_ROUND = Number(process.env.IDENTICAL_PER_ROUND ?? 25);
const ROOT = { Authorization: `Bearer ${TEST_API_KEY}` };

describe("SIGKILLs in bursts of the same call from one held wallet: every key mints once, on its own transaction (issue 51)", function () {
  this.timeout(300_000);

  it(`${ROUNDS} rounds of ${PER_ROUND} identical keyed mints, killed 0.3 to 1.8 s in`, async function () {
    const random = seeded(SEED);
    const node = await ChainNode.start();
    const dataDir = await seededDataDir("identical-calls-");
    const provider = directProvider(node.rpcUrl);
    const env = { DATA_DIR: dataDir, TX_TIMEOUT_MS: "5000", BLOCK_POLL_MS: "200", WALLET_MASTER_KEY: "33".repeat(32) };
    let service: ServiceProcess | undefined;
    try {
      const collection = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "100000", NFT_MAX_MINT_PER_TX: "5" });
      const nft = collectionAt(collection, provider);
      const supplyBefore = (await nft.totalSupply()) as bigint;
      service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
      const made = await new ApiClient(service.url).post("/wallets", { kind: "local", label: "held" }, ROOT);
      expect(made.status, made.text).to.equal(201);
      await provider.send("hardhat_setBalance", [made.body.address, `0x${(10n ** 20n).toString(16)}`]);
      const body = { from: "held", contractAddress: collection, mintAmount: 1 };
      const keys: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // A re-sign of this process stalls once between its new nonce and its record (a slow fee
        // quote): the window in which issue 51 handed its nonce to a new write of the same call.
        const stall = { CRASH_AT: "resign-nonce-taken", CRASH_PAUSE_MS: String(200 + Math.floor(random() * 1500)) };
        if (round > 0) service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: { ...env, ...stall } });
        const api = new ApiClient(service.url);
        const burst: Array<Promise<ApiResponse | null>> = [];
        for (let i = 0; i < PER_ROUND; i++) {
          const key = `same-${round}-${i}`;
          keys.push(key);
          burst.push(api.post("/nft/mint", body, { ...ROOT, "Idempotency-Key": key }).catch(() => null));
        }
        await sleep(300 + Math.floor(random() * 1500));
        await service.kill();
        await Promise.all(burst);
      }
      service = await ServiceProcess.start({
        rpcUrl: node.rpcUrl,
        env: { ...env, CRASH_AT: "resign-nonce-taken", CRASH_PAUSE_MS: String(200 + Math.floor(random() * 1500)) },
      });
      const api = new ApiClient(service.url);
      try {
        const answers = new Map<string, JsonBody>();
        const deadline = Date.now() + 90_000;
        while (answers.size < keys.length) {
          const waiting = keys.filter((key) => !answers.has(key));
          if (Date.now() > deadline) throw new Error(`${waiting.length} keys still not 200 (first: ${waiting[0]})`);
          const replies = await Promise.all(
            waiting.map((key) => api.post("/nft/mint", body, { ...ROOT, "Idempotency-Key": key })),
          );
          replies.forEach((reply, i) => reply.status === 200 && answers.set(waiting[i], reply.body));
          if (answers.size < keys.length) await sleep(500);
        }
        const hashes = [...answers.values()].map((answer) => answer.transactionHash as string);
        const shared = hashes.filter((hash, i) => hashes.indexOf(hash) !== i);
        expect(shared, "keys answered 200 with the same transaction").to.deep.equal([]);
        expect(((await nft.totalSupply()) as bigint) - supplyBefore).to.equal(BigInt(keys.length));
        expect(await operationsSharingTransaction(api)).to.equal(0);
      } catch (err) {
        if (process.env.CRASH_LOG) writeFileSync(process.env.CRASH_LOG, service.output());
        throw err;
      }
    } catch (err) {
      (err as Error).message += ` (CRASH_SEED=${SEED})`;
      throw err;
    } finally {
      await service?.stop();
      provider.destroy();
      await node.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
