/**
 * Issue 43: SIGKILLs of the service during bursts of keyed mints on two chains at once (two `hardhat
 * node`s, their own chain ids, one PGlite store), then a restart and replays: every key confirmed
 * exactly once on its own chain.
 */
import { rmSync } from "node:fs";
import { expect } from "chai";
import { Wallet, type JsonRpcProvider } from "ethers";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  TEST_API_KEY,
  collectionAt,
  deployDirectly,
  directProvider,
  sleep,
} from "../api/harness";
import { replayUntilConfirmed, type KeyedWrite } from "../support/keyed-replay";
import { seededDataDir } from "../support/pglite-template";
import { seededRandom } from "../support/seeded-random";
import { operationsSharingTransaction } from "../engine/fixture";

const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);
const ROUNDS = 3;
const PER_ROUND = 40;
const CHAINS = [
  { id: 31_411, name: "alpha" },
  { id: 31_412, name: "beta" },
];
const KEYS = DEV_KEYS.slice(6, 8).map((key) => new Wallet(key));

describe("SIGKILLs in the middle of bursts of keyed mints on two chains (PGlite, automining nodes)", function () {
  this.timeout(300_000);
  let nodes: ChainNode[];
  let providers: JsonRpcProvider[];
  let collection: string;
  let dataDir: string;

  before(async function () {
    nodes = await Promise.all(CHAINS.map((c) => ChainNode.start(undefined, c.id)));
    providers = nodes.map((n, i) => directProvider(n.rpcUrl, CHAINS[i].id));
    // The deployer's first contract on each chain: the same address on both.
    const addresses = await Promise.all(
      providers.map((p) => deployDirectly(new Wallet(DEV_KEYS[0], p), { maxSupply: 100_000n, maxMintAmountPerTx: 5n })),
    );
    expect(addresses[0]).to.equal(addresses[1]);
    collection = addresses[0];
    dataDir = await seededDataDir("chains-crash-");
  });

  after(async function () {
    for (const p of providers ?? []) p.destroy();
    await Promise.all((nodes ?? []).map((n) => n.stop()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it(`${ROUNDS} kills at random moments: each chain's supply grows by its number of keys, one confirmed operation per key on its chain`, async function () {
    const random = seededRandom(SEED);
    const chains = CHAINS.map((c, i) => ({ ...c, rpcUrls: [nodes[i].rpcUrl] }));
    const env = { DATA_DIR: dataDir, TX_TIMEOUT_MS: "5000", BLOCK_POLL_MS: "200" };
    const supplyBefore = await Promise.all(providers.map((p) => collectionAt(collection, p).totalSupply()));
    const sent: KeyedWrite[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const service = await ServiceProcess.start({ chains, env });
        const api = new ApiClient(service.url);
        const burst = Array.from({ length: PER_ROUND }, (_, i) => {
          const chain = CHAINS[i % 2].name;
          const body = { chain, privateKey: KEYS[(i >> 1) % 2].privateKey, contractAddress: collection, mintAmount: 1 };
          // The same key on both chains: two writes, one on each.
          const item = { key: `r${round}-${i >> 1}`, body };
          sent.push(item);
          return api.post("/nft/mint", body, { "Idempotency-Key": item.key }).catch(() => null);
        });
        await sleep(200 + Math.floor(random() * 1500));
        await service.kill();
        await Promise.all(burst);
      }
      const service = await ServiceProcess.start({ chains, env });
      try {
        const api = new ApiClient(service.url);
        await replayUntilConfirmed(api, sent);
        for (const [i, chain] of CHAINS.entries()) {
          const keys = sent.filter((s) => s.body.chain === chain.name).length;
          const supply = await collectionAt(collection, providers[i]).totalSupply();
          expect(supply - supplyBefore[i], chain.name).to.equal(BigInt(keys));
          const listed = await api.request(
            "GET",
            `/nft/operations?chain=${chain.name}&collection=${collection}&limit=500`,
            { headers: { authorization: `Bearer ${TEST_API_KEY}` } },
          );
          expect(listed.status, listed.text).to.equal(200);
          const ops = listed.body.operations as { chainId: string; status: string }[];
          expect(ops.length, `${chain.name}'s operations`).to.equal(keys);
          expect(ops.every((o) => o.chainId === String(chain.id) && o.status === "confirmed")).to.equal(true);
        }
        // Issue 51: no two operations of the store answered with one transaction (or one mined nonce).
        expect(await operationsSharingTransaction(api)).to.equal(0);
      } finally {
        await service.stop();
      }
    } catch (err) {
      (err as Error).message += ` (CRASH_SEED=${SEED})`;
      throw err;
    }
  });
});
