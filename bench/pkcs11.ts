/**
 * The PKCS#11 signer against ethers' Wallet, in one process, on a throwaway SoftHSM2 token:
 *  (a) signTransaction of the same EIP-1559 transactions: signatures per second and p50 latency,
 *      one at a time, and all at once (the token's session pool signs on libuv threads; a Wallet
 *      signs on the event loop, so all at once is one at a time for it);
 *  (b) where a PKCS#11 signature's time goes: the token's CKM_ECDSA alone, then low s and the
 *      recovery id in JavaScript, from the parity of R (what the signer does) and, as a reference,
 *      by recovering the address with v = 27, then 28 (ethers' recoverAddress, once or twice);
 *  (c) N mints of the reference collection, each signed, broadcast and waited for one after the
 *      other, on the in-process automining Hardhat network: the token's key vs a local key.
 * Each side runs BENCH_ROUNDS times, alternating with the other, and the median round is shown.
 * Run: npm run bench:pkcs11   (BENCH_SIGNATURES, BENCH_MINTS, BENCH_ROUNDS, BENCH_SESSIONS change the load)
 */
import {
  getBytes,
  hexlify,
  recoverAddress,
  Signature,
  toBeHex,
  toBigInt,
  Transaction,
  Wallet,
  type TransactionLike,
  type TransactionRequest,
} from "ethers";
import { ethers, network } from "hardhat";
import { collectionInterface, DEFAULT_COLLECTION, deployTransaction } from "../server/chain/collection";
import { Pkcs11Signer, Pkcs11Token, type Pkcs11Key } from "../server/signers/pkcs11";
import { ethereumSignature, SECP256K1_N } from "../server/signers/pkcs11/secp256k1";
import type { TransactionSigner } from "../server/signers/signer";
import { createSoftHsmToken } from "../test/support/softhsm";
import { median } from "./median";
import { envSized } from "./smoke";

const SIGNATURES = envSized("BENCH_SIGNATURES", 300, 10);
const MINTS = envSized("BENCH_MINTS", 100, 5);
const ROUNDS = envSized("BENCH_ROUNDS", 3, 1);
const SESSIONS = envSized("BENCH_SESSIONS", 4, 2);

interface Figures {
  perSecond: number;
  p50Ms: number;
}

/** Runs `work` once per item, one at a time: rate and p50 of each call. */
async function oneAtATime<T>(items: T[], work: (item: T) => Promise<unknown>): Promise<Figures> {
  const latencies: number[] = [];
  const started = performance.now();
  for (const item of items) {
    const t = performance.now();
    await work(item);
    latencies.push(performance.now() - t);
  }
  return { perSecond: (items.length * 1000) / (performance.now() - started), p50Ms: median(latencies) };
}

/** Starts every call at once: the rate (a call's latency there is mostly its wait in the queue). */
async function allAtOnce<T>(items: T[], work: (item: T) => Promise<unknown>): Promise<Figures> {
  const started = performance.now();
  await Promise.all(items.map(work));
  return { perSecond: (items.length * 1000) / (performance.now() - started), p50Ms: Number.NaN };
}

/** Runs each side ROUNDS times, alternating, and keeps each side's median round (by rate). */
async function alternate(sides: Record<string, () => Promise<Figures>>): Promise<Record<string, Figures>> {
  const runs: Record<string, Figures[]> = Object.fromEntries(Object.keys(sides).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of Object.entries(sides)) runs[name].push(await run());
  }
  return Object.fromEntries(
    Object.entries(runs).map(([name, figures]) => {
      const sorted = [...figures].sort((a, b) => a.perSecond - b.perSecond);
      return [name, sorted[Math.floor(sorted.length / 2)]];
    }),
  );
}

function transactions(chainId: bigint, count: number): TransactionLike<string>[] {
  return Array.from({ length: count }, (_, i) => ({
    chainId,
    nonce: i,
    type: 2,
    to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    value: BigInt(i),
    data: collectionInterface().encodeFunctionData("mint", [1]),
    gasLimit: 200_000,
    maxFeePerGas: 2n * 10n ** 9n,
    maxPriorityFeePerGas: 10n ** 9n,
  }));
}

/** The recovery id as first specified: low s, then recoverAddress with v = 27, else 28 (the reference row). */
function recoveredByAddress(digest: Uint8Array, rs: Uint8Array, address: string): Signature {
  let s = toBigInt(rs.subarray(32));
  if (s > SECP256K1_N / 2n) s = SECP256K1_N - s;
  for (const v of [27, 28]) {
    const signature = Signature.from({ r: hexlify(rs.subarray(0, 32)), s: toBeHex(s, 32), v });
    if (recoverAddress(digest, signature) === address) return signature;
  }
  throw new Error("no recovery id recovers the address");
}

async function signing(wallet: Wallet, signer: Pkcs11Signer, token: Pkcs11Token, key: Pkcs11Key) {
  const { chainId } = await ethers.provider.getNetwork();
  const txs = transactions(chainId, SIGNATURES);
  const digests = txs.map((tx) => getBytes(Transaction.from(tx).unsignedHash));
  const raw = await Promise.all(digests.map((digest) => token.signDigest(key, digest)));
  const cases = digests.map((digest, i) => ({ digest, rs: raw[i] }));
  const figures = await alternate({
    "ethers Wallet.signTransaction": () => oneAtATime(txs, (tx) => wallet.signTransaction(tx)),
    "PKCS#11 signTransaction, one at a time": () => oneAtATime(txs, (tx) => signer.signTransaction(tx)),
    [`PKCS#11 signTransaction, all at once (${SESSIONS} sessions)`]: () =>
      allAtOnce(txs, (tx) => signer.signTransaction(tx)),
    "  of which: token CKM_ECDSA alone": () => oneAtATime(digests, (digest) => token.signDigest(key, digest)),
    "  of which: low s + v from R's parity (JS)": () =>
      oneAtATime(cases, async ({ digest, rs }) => ethereumSignature(digest, rs, key.publicKey)),
    "  reference: low s + v by recoverAddress 27/28": () =>
      oneAtATime(cases, async ({ digest, rs }) => recoveredByAddress(digest, rs, key.address)),
  });
  const base = figures["ethers Wallet.signTransaction"];
  console.log(`\n(a, b) signTransaction of ${SIGNATURES} EIP-1559 transactions, median of ${ROUNDS} rounds`);
  console.table(
    Object.fromEntries(
      Object.entries(figures).map(([name, f]) => [
        name,
        {
          "signatures/s": Math.round(f.perSecond),
          "p50 ms": Number.isNaN(f.p50Ms) ? "-" : Number(f.p50Ms.toFixed(3)),
          "rate / ethers": Number((f.perSecond / base.perSecond).toFixed(3)),
          "p50 / ethers": Number.isNaN(f.p50Ms) ? "-" : Number((f.p50Ms / base.p50Ms).toFixed(2)),
        },
      ]),
    ),
  );
}

async function minting(wallet: Wallet, signer: Pkcs11Signer) {
  const provider = ethers.provider;
  const { chainId } = await provider.getNetwork();
  for (const address of [wallet.address, signer.address]) {
    await network.provider.send("hardhat_setBalance", [address, "0x" + (10n ** 22n).toString(16)]);
  }
  const deployer = wallet.connect(provider);
  const deployment = await deployer.sendTransaction(await deployTransaction(DEFAULT_COLLECTION));
  const collection = (await deployment.wait())!.contractAddress!;
  const data = collectionInterface().encodeFunctionData("mint", [1]);
  const value = DEFAULT_COLLECTION.cost;
  const gasLimit = ((await provider.estimateGas({ from: wallet.address, to: collection, data, value })) * 13n) / 10n;

  /** MINTS mints one after the other: sign, broadcast, wait for the receipt. */
  const mints = (by: TransactionSigner) => async (): Promise<Figures> => {
    let nonce = await provider.getTransactionCount(by.address);
    const block = await provider.getBlock("latest");
    const fees = { maxFeePerGas: block!.baseFeePerGas! * 2n + 10n ** 9n, maxPriorityFeePerGas: 10n ** 9n };
    return oneAtATime(Array.from({ length: MINTS }), async () => {
      const raw = await by.signTransaction({
        chainId,
        nonce: nonce++,
        type: 2,
        to: collection,
        data,
        value,
        gasLimit,
        ...fees,
      });
      const receipt = await (await provider.broadcastTransaction(raw)).wait();
      if (receipt?.status !== 1 || receipt.from !== by.address) throw new Error("mint failed");
    });
  };
  const local = {
    address: wallet.address,
    kind: "local" as const,
    signTransaction: (tx: TransactionRequest) => wallet.signTransaction(tx),
    signTypedData: wallet.signTypedData.bind(wallet),
  };
  const figures = await alternate({ "local key (ethers Wallet)": mints(local), "PKCS#11 token key": mints(signer) });
  const base = figures["local key (ethers Wallet)"];
  console.log(
    `\n(c) ${MINTS} mints one after the other (sign, broadcast, receipt), in-process automining chain, median of ${ROUNDS} rounds`,
  );
  console.table(
    Object.fromEntries(
      Object.entries(figures).map(([name, f]) => [
        name,
        {
          "wall time s": Number((MINTS / f.perSecond).toFixed(2)),
          "mints/s": Number(f.perSecond.toFixed(1)),
          "p50 ms": Number(f.p50Ms.toFixed(2)),
          "wall time / local": Number((base.perSecond / f.perSecond).toFixed(3)),
        },
      ]),
    ),
  );
}

async function main(): Promise<void> {
  const hsm = createSoftHsmToken({ tokenLabel: "bench" });
  const restoreEnv = hsm.useInThisProcess();
  const token = await Pkcs11Token.open({
    modulePath: hsm.modulePath,
    tokenLabel: hsm.tokenLabel,
    pin: hsm.pin,
    sessions: SESSIONS,
  });
  try {
    const key = await token.generateKey("bench-key");
    const signer = new Pkcs11Signer(token, key);
    const wallet = new Wallet(Wallet.createRandom().privateKey);
    console.log(`SoftHSM2 token, secp256k1 key ${key.address}; ${SESSIONS} sessions; Node ${process.version}`);
    await signing(wallet, signer, token, key);
    await minting(wallet, signer);
  } finally {
    await token.close();
    restoreEnv();
    hsm.remove();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
