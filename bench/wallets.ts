/**
 * Mints through held wallets against the same mint with a request key, on one service and one
 * `hardhat node` (automine), in the same run:
 *  - baseline: POST /nft/mint with `privateKey` (open mode, no access key), its own dev key;
 *  - local wallet: the same mint with `from` (a key sealed under WALLET_MASTER_KEY, opened per
 *    signature), with the root access key; target >= 0.95x the baseline;
 *  - local wallet with a dailySpendLimit: the same, paying one atomic reservation in the store per write;
 *  - PKCS#11 wallet: the same with `from` naming a key inside a SoftHSM2 token (reported, no target);
 * and, in this process, what signing alone costs: a local wallet's signer (the key opened from its
 * sealed form for each signature) against ethers' Wallet holding the key (a request key's signer).
 * Each series sends MINTS mints from CONCURRENCY clients; the series run in turn (the order turning
 * by one each round), ROUNDS times. Shown: each series' mints over its time in all rounds together
 * (short rounds, finely interleaved, so a busy neighbour on the machine weighs on every series
 * alike), the median round's latencies, and each round's rate.
 * Run: npm run bench:wallets   (BENCH_MINTS, BENCH_ROUNDS change the load)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import { JsonRpcProvider, Network, Wallet, type TransactionRequest } from "ethers";
import { DEFAULT_COLLECTION, deployTransaction } from "../server/chain/collection";
import { PooledSigner } from "../server/chain/signer-pool";
import { Pkcs11Token } from "../server/signers/pkcs11";
import type { TransactionSigner } from "../server/signers/signer";
import { LocalWalletSigner } from "../server/wallets/local-signer";
import { MasterKey } from "../server/wallets/master-key";
import { ChainNode, DEV_KEYS, ServiceProcess, TEST_API_KEY } from "../test/api/harness";
import { createSoftHsmToken } from "../test/support/softhsm";
import { verdict, walletsChecks } from "./checks";
import { envSized, sized } from "./smoke";
import { postLoad } from "./load";

const MINTS = envSized("BENCH_MINTS", 100, 5);
const ROUNDS = envSized("BENCH_ROUNDS", 8, 1);
const CONCURRENCY = 16;
// Target: WALLETS_TARGET in ./checks.
const AUTH = { Authorization: `Bearer ${TEST_API_KEY}` };

interface Figures {
  rps: number;
  seconds: number;
  mints: number;
  p50: number;
  p99: number;
  errors: number;
}

async function main(): Promise<void> {
  const hsm = createSoftHsmToken({ tokenLabel: "bench", pin: randomBytes(8).toString("hex") });
  const restore = hsm.useInThisProcess();
  const token = await Pkcs11Token.open({ modulePath: hsm.modulePath, tokenLabel: hsm.tokenLabel, pin: hsm.pin });
  await token.generateKey("bench-key");
  await token.close();
  restore();

  const node = await ChainNode.start();
  const provider = new JsonRpcProvider(node.rpcUrl, Network.from(31337), { staticNetwork: true, cacheTimeout: -1 });
  const deployer = new Wallet(DEV_KEYS[0], provider);
  const deployed = await (
    await deployer.sendTransaction(await deployTransaction({ ...DEFAULT_COLLECTION, maxSupply: 100_000n }))
  ).wait();
  const contractAddress = deployed!.contractAddress!;
  const dataDir = mkdtempSync(path.join(tmpdir(), "bench-wallets-"));
  console.error(`node at ${node.rpcUrl}, collection at ${contractAddress}; starting the service`);
  const service = await ServiceProcess.start({
    rpcUrl: node.rpcUrl,
    stdout: "ignore",
    env: {
      DATA_DIR: dataDir,
      WALLET_MASTER_KEY: randomBytes(32).toString("hex"),
      PKCS11_MODULE: hsm.modulePath,
      PKCS11_TOKEN_LABEL: hsm.tokenLabel,
      PKCS11_PIN: hsm.pin,
      ...hsm.env,
    },
  });
  const create = async (body: Record<string, unknown>) => {
    const res = await fetch(`${service.url}/wallets`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTH },
      body: JSON.stringify(body),
    });
    const created = (await res.json()) as { address: string };
    if (res.status !== 201) throw new Error(`POST /wallets answered ${res.status} ${JSON.stringify(created)}`);
    await provider.send("hardhat_setBalance", [created.address, `0x${(10n ** 24n).toString(16)}`]);
    return created.address;
  };
  await create({ kind: "local", label: "bench-local" });
  const limited = await create({ kind: "local", label: "bench-limited" });
  await create({ kind: "pkcs11", label: "bench-hsm", keyLabel: "bench-key" });
  await fetch(`${service.url}/wallets/${limited}`, {
    method: "PATCH",
    headers: { "content-type": "application/json", ...AUTH },
    body: JSON.stringify({ dailySpendLimit: (10n ** 24n).toString() }),
  });

  const body = (signer: Record<string, string>) => JSON.stringify({ ...signer, contractAddress, mintAmount: 1 });
  const series: Array<[string, string, Record<string, string>]> = [
    ["privateKey (baseline)", body({ privateKey: DEV_KEYS[1] }), {}],
    ["local wallet (from)", body({ from: "bench-local" }), AUTH],
    ["local wallet with a spend limit", body({ from: "bench-limited" }), AUTH],
    ["PKCS#11 wallet on SoftHSM2 (from)", body({ from: "bench-hsm" }), AUTH],
  ];
  const rounds = new Map<string, Figures[]>(series.map(([name]) => [name, []]));
  const url = `${service.url}/nft/mint`;
  // Warm-up of every path (JIT, the signer caches, the token's sessions).
  for (const [, json, headers] of series) await mints(url, json, headers, sized(32, 4));
  for (let round = 0; round < ROUNDS; round++) {
    console.error(`round ${round + 1} of ${ROUNDS}: ${MINTS} mints per series`);
    // The order turns by one each round: a drift of the machine's load, or of the chain (it grows),
    // favours no series.
    const order = [...series.slice(round % series.length), ...series.slice(0, round % series.length)];
    for (const [name, json, headers] of order) rounds.get(name)!.push(await mints(url, json, headers, MINTS));
  }
  await service.stop();
  provider.destroy();
  await node.stop();
  hsm.remove();
  rmSync(dataDir, { recursive: true, force: true });

  for (const [name, list] of rounds)
    console.error(`${name}: ${list.map((f) => f.rps.toFixed(1)).join(", ")} mints/s by round`);
  const figures = new Map([...rounds].map(([name, list]) => [name, overall(list)]));
  console.table(
    Object.fromEntries(
      [...figures].map(([name, f]) => [
        name,
        {
          "mints/s (all rounds)": f.rps.toFixed(1),
          "p50 ms (median round)": f.p50.toFixed(1),
          "p99 ms (median round)": f.p99.toFixed(1),
          errors: f.errors,
        },
      ]),
    ),
  );
  const signing = await signingCost();
  console.log(
    `signTransaction: local wallet signer ${signing.local.toFixed(1)} µs, ethers Wallet (request key) ${signing.request.toFixed(1)} µs ` +
      `(+${(signing.local - signing.request).toFixed(1)} µs per signature; a mint's p50 above is ${figures.get("local wallet (from)")!.p50.toFixed(0)} ms)`,
  );
  const baseline = figures.get("privateKey (baseline)")!;
  const ratio = (name: string) => figures.get(name)!.rps / baseline.rps;
  const local = ratio("local wallet (from)");
  const errors = [...figures.values()].reduce((sum, f) => sum + f.errors, 0);
  const exitCode = verdict(walletsChecks({ localRatio: local, errors }));
  console.log(
    `report: mint through a local wallet with a daily spend limit / with privateKey = ${ratio("local wallet with a spend limit").toFixed(2)}x`,
  );
  console.log(
    `report: mint through a PKCS#11 wallet (SoftHSM2) / with privateKey = ${ratio("PKCS#11 wallet on SoftHSM2 (from)").toFixed(2)}x`,
  );
  process.exitCode = exitCode;
}

/** Microseconds per signTransaction of a local wallet's signer and of ethers' Wallet, alternated in rounds. */
async function signingCost(): Promise<{ local: number; request: number }> {
  const wallet = Wallet.createRandom();
  const masterKey = MasterKey.generate();
  const sealed = masterKey.sealWalletKey(wallet.address, Buffer.from(wallet.privateKey.slice(2), "hex"));
  const signers: Record<"local" | "request", TransactionSigner> = {
    local: new LocalWalletSigner(wallet.address, sealed, masterKey),
    request: new PooledSigner(new Wallet(wallet.privateKey)),
  };
  const tx: TransactionRequest = {
    chainId: 31337n,
    to: wallet.address,
    data: "0xa0712d680000000000000000000000000000000000000000000000000000000000000001",
    value: 10n ** 16n,
    gasLimit: 100_000n,
    type: 2,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  };
  const spent = { local: 0, request: 0 };
  const PER_ROUND = sized(300, 10);
  for (let round = 0; round < sized(12, 3); round++) {
    for (const name of round % 2 === 0 ? (["local", "request"] as const) : (["request", "local"] as const)) {
      const started = performance.now();
      for (let nonce = 0; nonce < PER_ROUND; nonce++) await signers[name].signTransaction({ ...tx, nonce });
      // The first two rounds warm the JIT up and are not counted.
      if (round >= 2) spent[name] += performance.now() - started;
    }
  }
  const per = (ms: number) => (ms * 1000) / (10 * PER_ROUND);
  return { local: per(spent.local), request: per(spent.request) };
}

/** `count` mints, CONCURRENCY at a time, each timed; one answered other than 200 counts as an error. */
async function mints(url: string, body: string, headers: Record<string, string>, count: number): Promise<Figures> {
  const { answered, ...figures } = await postLoad(url, body, { count, concurrency: CONCURRENCY, headers });
  return { ...figures, mints: answered };
}

/** All rounds together: mints over time; latencies of the median round. */
function overall(rounds: Figures[]): Figures {
  const sorted = [...rounds].sort((a, b) => a.rps - b.rps);
  const sum = (pick: (f: Figures) => number) => rounds.reduce((total, f) => total + pick(f), 0);
  return {
    ...sorted[Math.floor(sorted.length / 2)],
    rps: sum((f) => f.mints) / sum((f) => f.seconds),
    seconds: sum((f) => f.seconds),
    mints: sum((f) => f.mints),
    errors: sum((f) => f.errors),
  };
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
