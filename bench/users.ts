/**
 * Demo-user benchmark: login rate and p99 on PGlite and on a PostgreSQL server, with a cheap
 * route and a raw scrypt verify rate measured in the same process as baselines, and the time
 * of one createWithList of 1,000 users on each.
 *
 *   npx hardhat run bench/users.ts        (or: npm run bench:users, or npx ts-node bench/users.ts)
 *
 * PostgreSQL: TEST_DATABASE_URL if set, else a throwaway cluster (test/users/postgres-server.ts).
 * BENCH_SECONDS (default 5) sets the length of each autocannon run.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism } from "node:os";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { createHttpApp } from "../server/http/app";
import { createLogger } from "../server/http/logger";
import { createUserRouter, hashPassword, openUserStore, verifyPassword, type UserStore } from "../server/users";
import { startPostgresServer } from "../test/users/postgres-server";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 16;
const BATCH = 1000;
const PASSWORD = "bench-password-1";

interface Row {
  backend: string;
  measure: string;
  rate: string;
  p99: string;
  note: string;
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  rows.push(await scryptVerifyRate());

  const dataDir = await mkdtemp(join(tmpdir(), "users-bench-"));
  try {
    rows.push(...(await benchBackend("PGlite", () => openUserStore({ dataDir }))));
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }

  const postgres = await startPostgresServer();
  try {
    const databaseUrl = await postgres.createDatabase();
    rows.push(...(await benchBackend(`PostgreSQL (${postgres.kind})`, () => openUserStore({ databaseUrl, dataDir }))));
  } finally {
    await postgres.stop();
  }

  printTable(rows);
}

/** Raw scrypt verifies per second with libuv's default pool, the ceiling for any login rate. */
async function scryptVerifyRate(): Promise<Row> {
  const hash = await hashPassword(PASSWORD);
  const started = performance.now();
  let done = 0;
  const worker = async () => {
    while (performance.now() - started < SECONDS * 1000) {
      await verifyPassword(PASSWORD, hash);
      done++;
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker)); // 4 = UV_THREADPOOL_SIZE's default
  const perSecond = done / ((performance.now() - started) / 1000);
  return {
    backend: "-",
    measure: "raw scrypt verify (4 at a time)",
    rate: `${perSecond.toFixed(1)}/s`,
    p99: "-",
    note: `N=2^14 r=8 p=1, ${availableParallelism()} CPUs`,
  };
}

async function benchBackend(backend: string, open: () => Promise<UserStore>): Promise<Row[]> {
  const openedAt = performance.now();
  const store = await open();
  const openMs = performance.now() - openedAt;
  const logger = createLogger("silent");
  const router = createUserRouter({ store, rateLimits: { callsPerHour: 1e9, maxFailuresPerIp: 1e9 } });
  const app = createHttpApp({ logger, routers: [router] });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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

    const login = await load(`${base}/v2/user/login?username=bench&password=${encodeURIComponent(PASSWORD)}`);
    rows.push({ backend, measure: "GET /v2/user/login", ...login, note: `${CONNECTIONS} connections, ${SECONDS} s` });

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
  }
  return rows;
}

async function load(url: string): Promise<{ rate: string; p99: string }> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx answers and ${result.errors} errors under load`);
  }
  return { rate: `${result.requests.average.toFixed(1)} req/s`, p99: `${result.latency.p99} ms` };
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
  console.log("\nLogin is slow by design (one scrypt verify each): compare it with the raw verify rate, not with GET.");
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
