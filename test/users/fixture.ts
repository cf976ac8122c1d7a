import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { openDatabase, type SqlDriver } from "../../server/db";
import { SqlUserStore, type UserRouterDeps } from "../../server/users";
import { startPostgresServer, type PostgresServer } from "./postgres-server";
import { startUserServer, type Reply, type UserServer } from "./user-server";
import { seedPglite } from "../support/pglite-template";

/** The backends every HTTP suite runs on; only PGlite has a data dir to reopen. */
export const BACKENDS = [
  { name: "PGlite", restartable: true, countersInDatabase: false },
  { name: "PostgreSQL server", restartable: false, countersInDatabase: true },
] as const;
export type Backend = (typeof BACKENDS)[number];

export const OK = { code: 200, type: "unknown", message: "ok" };
export const SESSION = /^logged in user session:([A-Za-z0-9_-]{43})$/;

/** One database (PGlite in a temp dir, or a fresh database on a throwaway PostgreSQL server) and servers on it. */
export interface UserFixture {
  database: SqlDriver;
  store: SqlUserStore;
  dataDir: string;
  databaseUrl?: string;
  /** Every log line of every server started by `serve`. */
  logs: string[];
  servers: UserServer[];
  /**
   * The user routes on a new listener, TRUST_PROXY on unless told. On PostgreSQL the abuse counters are shared by
   * every server on the database (as by instances), so limits are generous unless `deps` lowers them: test limits
   * from a fresh address.
   */
  serve(deps?: Partial<UserRouterDeps>, options?: { trustProxy?: boolean; logs?: string[] }): Promise<UserServer>;
  /** Another connection to the same PostgreSQL database, as a second service instance opens it (closed by close()). */
  openAnotherDatabase(): Promise<SqlDriver>;
  /** Closes the store and database and opens them again on the same data (servers must be closed first). */
  reopen(): Promise<void>;
  close(): Promise<void>;
}

export async function openFixture(backend: Backend): Promise<UserFixture> {
  const dataDir = await mkdtemp(join(tmpdir(), "users-http-"));
  let postgres: PostgresServer | undefined;
  let databaseUrl: string | undefined;
  if (backend.name === "PostgreSQL server") {
    postgres = await startPostgresServer();
    databaseUrl = await postgres.createDatabase();
  }
  const extraDatabases: SqlDriver[] = [];
  const fixture: UserFixture = {
    database: await openDatabase({ databaseUrl, dataDir: databaseUrl ? dataDir : await seedPglite(dataDir) }),
    store: undefined as unknown as SqlUserStore,
    dataDir,
    databaseUrl,
    logs: [],
    servers: [],
    async serve(deps = {}, { trustProxy = true, logs = fixture.logs } = {}) {
      const server = await startUserServer(
        fixture.store,
        {
          database: fixture.database,
          ...deps,
          rateLimits: {
            maxFailuresPerIp: 10_000,
            maxFailuresPerUsernameAndIp: 10_000,
            creationsPerWindow: 100_000,
            ...deps.rateLimits,
          },
        },
        logs,
        { trustProxy },
      );
      fixture.servers.push(server);
      return server;
    },
    async openAnotherDatabase() {
      if (!databaseUrl) throw new Error("a PGlite database belongs to one process: no second instance");
      const another = await openDatabase({ databaseUrl, dataDir });
      extraDatabases.push(another);
      return another;
    },
    async reopen() {
      await fixture.database.close();
      fixture.database = await openDatabase({ databaseUrl, dataDir });
      fixture.store = new SqlUserStore(fixture.database);
    },
    async close() {
      for (const server of fixture.servers) await server.close();
      for (const another of extraDatabases) await another.close();
      await fixture.database?.close();
      await postgres?.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  fixture.store = new SqlUserStore(fixture.database);
  return fixture;
}

export function expectError(reply: Reply, status: number, code: string): void {
  expect(reply.status, reply.text).to.equal(status);
  expect(reply.json?.error?.code, reply.text).to.equal(code);
  expect(reply.headers.get("content-type")).to.equal("application/json; charset=utf-8");
}

let addressSeq = 0;
/** A client address no other test speaks from (sent as X-Forwarded-For to a TRUST_PROXY server). */
export function freshAddress(): string {
  const n = ++addressSeq;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

export function fromAddress(address: string): Record<string, string> {
  return { "X-Forwarded-For": address };
}

export function login(
  server: UserServer,
  username: string,
  password: string,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return server.call(
    "GET",
    `/v2/user/login?username=${encodeURIComponent(username)}&password=${encodeURIComponent(password)}`,
    { headers },
  );
}

/** Logs in and answers the session token (the part after `logged in user session:`). */
export async function sessionOf(server: UserServer, username: string, password: string): Promise<string> {
  const reply = await login(server, username, password);
  expect(reply.status, reply.text).to.equal(200);
  return SESSION.exec(reply.json)![1];
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
export const apiKey = (token: string) => ({ api_key: token });

/** A distinctive password, recorded in `passwords` so a test can look for it in every output. */
export function secretIn(passwords: string[]) {
  return (label: string) => {
    const password = `Pw-${label}-${randomBytes(8).toString("hex")}`;
    passwords.push(password);
    return password;
  };
}
