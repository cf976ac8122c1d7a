import { execFile, execFileSync, spawnSync } from "node:child_process";
import { chown, mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { freePort } from "../support/free-port";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { Client } from "pg";

const run = promisify(execFile);

/** A PostgreSQL server for tests: a throwaway cluster, or the one TEST_DATABASE_URL names. */
export interface PostgresServer {
  /** Connection URL of the server's `postgres` database (or TEST_DATABASE_URL as given). */
  readonly url: string;
  /** "throwaway" when this process started the cluster. */
  readonly kind: "throwaway" | "external";
  /** Creates an empty database and answers its URL; dropped again by stop(). */
  createDatabase(): Promise<string>;
  /** Drops the databases made here; stops and deletes a throwaway cluster. */
  stop(): Promise<void>;
}

export const INSTALL_HINT =
  "PostgreSQL server binaries (initdb, pg_ctl) not found in /usr/lib/postgresql/*/bin or on PATH. " +
  "Install them (Debian/Ubuntu: `apt-get install -y postgresql`) or set TEST_DATABASE_URL=postgres://user@host:port/db " +
  "to a server where that user may CREATE DATABASE.";

/**
 * Uses TEST_DATABASE_URL when set; otherwise initdb's a cluster in a temp dir and starts it on a
 * free loopback port (trust auth, socket dir inside the temp dir). Throws INSTALL_HINT when no
 * binaries are found: a missing server must fail the suite, never skip it silently.
 */
export async function startPostgresServer(): Promise<PostgresServer> {
  const external = process.env.TEST_DATABASE_URL;
  if (external) return withDatabases(external, "external", async () => {});
  return startThrowawayCluster();
}

async function startThrowawayCluster(): Promise<PostgresServer> {
  const bin = await findPostgresBin();
  if (!bin) throw new Error(INSTALL_HINT);

  const dir = await mkdtemp(join(tmpdir(), "users-pg-"));
  const dataDir = join(dir, "data");
  const socketDir = join(dir, "socket");
  await mkdir(socketDir);
  // initdb refuses to run as root: as root, hand the directory to the `postgres` OS user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString());
    await chown(dir, uid, gid);
    await chown(socketDir, uid, gid);
  }
  const asPostgres = (tool: string, args: string[]) =>
    asRoot
      ? run("runuser", ["-u", "postgres", "--", join(bin, tool), ...args], { env: { ...process.env, LC_ALL: "C" } })
      : run(join(bin, tool), args, { env: { ...process.env, LC_ALL: "C" } });

  let started = false;
  const stopCluster = async () => {
    if (started) {
      await asPostgres("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]).catch(() => {});
      started = false;
    }
    process.removeListener("exit", stopOnExit);
    await rm(dir, { recursive: true, force: true });
  };
  // If the process ends without stop() (a crash, Ctrl-C in mocha), do not leave a server behind.
  const stopOnExit = () => {
    if (!started) return;
    const args = [join(bin, "pg_ctl"), "-D", dataDir, "-m", "immediate", "stop"];
    spawnSync(asRoot ? "runuser" : args[0], asRoot ? ["-u", "postgres", "--", ...args] : args.slice(1));
    spawnSync("rm", ["-rf", dir]);
  };
  process.on("exit", stopOnExit);

  try {
    await asPostgres("initdb", [
      "-D",
      dataDir,
      "-U",
      "postgres",
      "-A",
      "trust",
      "-E",
      "UTF8",
      "--locale=C",
      "--no-sync",
    ]);
    const port = await freePort();
    const serverOptions = [
      `-p ${port}`,
      `-k ${socketDir}`,
      "-c listen_addresses=127.0.0.1",
      "-c fsync=off", // a throwaway cluster: durability only costs time here
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
    ].join(" ");
    started = true;
    await asPostgres("pg_ctl", [
      "-D",
      dataDir,
      "-l",
      join(dir, "server.log"),
      "-o",
      serverOptions,
      "-w",
      "-t",
      "30",
      "start",
    ]);
    return withDatabases(`postgres://postgres@127.0.0.1:${port}/postgres`, "throwaway", stopCluster);
  } catch (err) {
    await stopCluster();
    throw err;
  }
}

/** Adds createDatabase() to a server URL; stop() drops what it created, then runs `stopServer`. */
function withDatabases(url: string, kind: PostgresServer["kind"], stopServer: () => Promise<void>): PostgresServer {
  const created: string[] = [];
  const admin = async <T>(fn: (client: Client) => Promise<T>): Promise<T> => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  return {
    url,
    kind,
    async createDatabase() {
      const name = `users_test_${randomBytes(6).toString("hex")}`;
      await admin((client) => client.query(`CREATE DATABASE ${name}`));
      created.push(name);
      const dbUrl = new URL(url);
      dbUrl.pathname = `/${name}`;
      return dbUrl.toString();
    },
    async stop() {
      if (kind === "external" && created.length > 0) {
        await admin(async (client) => {
          for (const name of created.splice(0)) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        });
      }
      await stopServer();
    },
  };
}

/** The newest /usr/lib/postgresql/<version>/bin holding initdb and pg_ctl, else a PATH entry that has both. */
export async function findPostgresBin(): Promise<string | undefined> {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? await readdir(root) : [];
  const candidates = [
    ...versions.sort((a, b) => Number(b) - Number(a)).map((version) => join(root, version, "bin")),
    ...(process.env.PATH ?? "").split(delimiter).filter(Boolean),
  ];
  return candidates.find((dir) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl")));
}
