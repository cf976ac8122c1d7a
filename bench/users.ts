/**
 * Demo-user benchmark: login rate and p99 on PGlite and on a PostgreSQL server, alone and while
 * four 1,000-user batches are being hashed, with a cheap route and raw password-verify rates
 * (argon2id now, scrypt before it) measured in the same process as baselines, and the time of
 * one createWithList of 1,000 users on each.
 *
 *   npx hardhat run bench/users.ts        (or: npm run bench:users, or npx ts-node bench/users.ts)
 *
 * PostgreSQL: TEST_DATABASE_URL if set, else a throwaway cluster (test/users/postgres-server.ts).
 * BENCH_SECONDS (default 5) sets the length of each autocannon run.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes, scrypt } from "node:crypto";
import { availableParallelism } from "node:os";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { createKoaApp } from "../server/http/koa-app";
import { createLogger } from "../server/http/logger";
import { openDatabase, type OpenDatabaseOptions } from "../server/db";
import {
  DEFAULT_ARGON2_PARAMS,
  SqlUserStore,
  createUserRouter,
  defaultHashSchedulerLimits,
  hashPassword,
  verifyPassword,
} from "../server/users";
import { startPostgresServer } from "../test/users/postgres-server";
import { envSized, sized } from "./smoke";

const SECONDS = envSized("BENCH_SECONDS", 5, 1);
const CONNECTIONS = 16;
const BATCH = sized(1000, 20);
const PASSWORD = "bench-password-1";

interface Row {
  backend: string;
  measure: string;
  rate: string;
  p99: string;
  note: string;
}

async function main(): Promise<void> {
  const rows: Row[] = [await argon2VerifyRate(), await scryptVerifyRate()];

  const dataDir = await mkdtemp(join(tmpdir(), "users-bench-"));
  try {
    rows.push(...(await benchBackend("PGlite", { dataDir })));
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }

  const postgres = await startPostgresServer();
  try {
    const databaseUrl = await postgres.createDatabase();
    rows.push(...(await benchBackend(`PostgreSQL (${postgres.kind})`, { databaseUrl, dataDir })));
  } finally {
    await postgres.stop();
  }

  printTable(rows);
}

/** Raw password verifies per second, `concurrency` at a time: the ceiling for any login rate. */
async function verifyRate(concurrency: number, verify: () => Promise<unknown>): Promise<string> {
  const started = performance.now();
  let done = 0;
  const worker = async () => {
    while (performance.now() - started < SECONDS * 1000) {
      await verify();
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return `${(done / ((performance.now() - started) / 1000)).toFixed(1)}/s`;
}

/** argon2id as the service verifies: as many at a time as the hashing scheduler has slots. */
async function argon2VerifyRate(): Promise<Row> {
  const hash = await hashPassword(PASSWORD);
  const { slots } = defaultHashSchedulerLimits();
  const { memoryCost, timeCost, parallelism } = DEFAULT_ARGON2_PARAMS;
  return {
    backend: "-",
    measure: `raw argon2id verify (${slots} at a time)`,
    rate: await verifyRate(slots, () => verifyPassword(PASSWORD, hash)),
    p99: "-",
    note: `m=${memoryCost / 1024} MiB t=${timeCost} p=${parallelism}, ${availableParallelism()} CPUs`,
  };
}

/** The scrypt the service used before argon2id (N=2^14, r=8, p=1), 4 at a time as it ran then. */
async function scryptVerifyRate(): Promise<Row> {
  const salt = randomBytes(16);
  const derive = () =>
    new Promise<Buffer>((resolve, reject) =>
      scrypt(PASSWORD, salt, 32, { N: 2 ** 14, r: 8, p: 1 }, (err, key) => (err ? reject(err) : resolve(key))),
    );
  return {
    backend: "-",
    measure: "raw scrypt verify (4 at a time; before)",
    rate: await verifyRate(4, derive),
    p99: "-",
    note: "N=2^14 r=8 p=1 (below OWASP's minimum)",
  };
}

async function benchBackend(backend: string, where: OpenDatabaseOptions): Promise<Row[]> {
  const openedAt = performance.now();
  const database = await openDatabase(where);
  const store = new SqlUserStore(database);
  const openMs = performance.now() - openedAt;
  const logger = createLogger("silent");
  const router = createUserRouter({
    store,
    database, // the abuse counters in the database, as npm start keeps them
    // 16 simultaneous logins of one user from one address: each counts as a failure until its
    // password checks out, so the failure limits are lifted here as well as the call limits.
    rateLimits: { callsPerHour: 1e9, maxFailuresPerIp: 1e9, maxFailuresPerUsernameAndIp: 1e9, creationsPerWindow: 1e9 },
  });
  const app = createKoaApp({ logger, routers: [router] });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const loginUrl = `${base}/v2/user/login?username=bench&password=${encodeURIComponent(PASSWORD)}`;
  const rows: Row[] = [];
  try {
    await post(`${base}/v2/user`, { username: "bench", password: PASSWORD, firstName: "Bench" });

    const get = await load(`${base}/v2/user/bench`);
    rows.push({
      backend,
      measure: "GET /v2/user/{username} (baseline)",
      ...get,
      note: `store opened in ${openMs.toFixed(0)} ms`,
    });

    const login = await load(loginUrl);
    rows.push({ backend, measure: "GET /v2/user/login", ...login, note: `${CONNECTIONS} connections, ${SECONDS} s` });

    // Four 1,000-user batches hashing (their clients hang up afterwards, which stops them).
    const clients = Array.from({ length: 4 }, () => new AbortController());
    const flood = clients.map((client, b) =>
      fetch(`${base}/v2/user/createWithList`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(
          Array.from({ length: BATCH }, (_, i) => ({ username: `flood-${b}-${i}`, password: `pw-${b}-${i}` })),
        ),
        signal: client.signal,
      }).catch(() => undefined),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const busy = await load(loginUrl, 1); // one user logging in over and over: the latency each login sees
    for (const client of clients) client.abort();
    await Promise.all(flood);
    rows.push({
      backend,
      measure: "GET /v2/user/login beside 4 batches of 1,000",
      ...busy,
      note: `1 connection, ${SECONDS} s; max ${busy.max}`,
    });

    for (const withPasswords of [true, false]) {
      const users = Array.from({ length: BATCH }, (_, i) => ({
        id: i + 1,
        username: `batch-${withPasswords ? "pw" : "nopw"}-${i}`,
        ...(withPasswords ? { password: `pw-${i}` } : {}),
      }));
      const started = performance.now();
      await post(`${base}/v2/user/createWithList`, users);
      const seconds = (performance.now() - started) / 1000;
      rows.push({
        backend,
        measure: `createWithList ${BATCH} users ${withPasswords ? "with" : "without"} passwords`,
        rate: `${(BATCH / seconds).toFixed(0)} users/s`,
        p99: "-",
        note: `one request: ${(seconds * 1000).toFixed(0)} ms`,
      });
    }
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await store.close();
    await database.close();
  }
  return rows;
}

async function load(url: string, connections = CONNECTIONS): Promise<{ rate: string; p99: string; max: string }> {
  const result = await autocannon({ url, connections, duration: SECONDS });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx answers and ${result.errors} errors under load`);
  }
  return {
    rate: `${result.requests.average.toFixed(1)} req/s`,
    p99: `${result.latency.p99} ms`,
    max: `${result.latency.max} ms`,
  };
}

async function post(url: string, body: unknown): Promise<void> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`);
}

function printTable(rows: Row[]): void {
  const header: Row = { backend: "backend", measure: "measure", rate: "rate", p99: "p99", note: "note" };
  const columns = Object.keys(header) as (keyof Row)[];
  const widths = columns.map((column) => Math.max(...[header, ...rows].map((row) => row[column].length)));
  const line = (row: Row) => columns.map((column, i) => row[column].padEnd(widths[i])).join(" | ");
  console.log(`\nDemo users benchmark (${SECONDS} s per load run)\n`);
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
  for (const row of rows) console.log(line(row));
  console.log(
    "\nLogin is slow by design (one argon2id verify each): compare it with the raw verify rate, not with GET.\n" +
      "Beside the batches, logins keep their lane: batches get at most all hashing slots but one.",
  );
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
