import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { parseEther, type JsonRpcProvider } from "ethers";
import { Client } from "pg";
import { expectError, expectNoSecretsIn } from "../api/expectations";
import {
  ApiClient,
  ChainNode,
  deployDirectly,
  directProvider,
  fundedWallet,
  type ServiceProcess,
} from "../api/harness";
import { sharedNode } from "../support/shared-node";
import type { SoftHsmToken } from "../support/softhsm";
import { findPostgresBin, startPostgresServer, type PostgresServer } from "../users/postgres-server";
import {
  fund,
  importableKey,
  KeyedClient,
  newMasterKey,
  secretsInText,
  startWalletService,
  tokenWithKey,
  walletEnv,
} from "./fixture";

const run = promisify(execFile);

describe("wallets on a PostgreSQL store", function () {
  this.timeout(60_000);
  let pg: PostgresServer;
  let databaseUrl: string;
  let db: Client;
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let hsm: SoftHsmToken;
  let dataDir: string;
  let service: ServiceProcess;
  let api: ApiClient;
  let root: KeyedClient;
  let collection: string;
  const imported = importableKey();
  const keystoreKey = importableKey();

  before(async function () {
    this.timeout(240_000);
    [pg, node, { hsm }] = await Promise.all([startPostgresServer(), sharedNode(), tokenWithKey("pg-key")]);
    databaseUrl = await pg.createDatabase();
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
    provider = directProvider(node.rpcUrl);
    dataDir = mkdtempSync(path.join(tmpdir(), "wallets-pg-"));
    service = await startWalletService(
      node.rpcUrl,
      dataDir,
      walletEnv(newMasterKey(), hsm, { DATABASE_URL: databaseUrl }),
    );
    api = new ApiClient(service.url);
    root = new KeyedClient(api);
    collection = await deployDirectly((await fundedWallet(provider)).connect(provider), { cost: parseEther("0.01") });
  });

  after(async function () {
    this.timeout(30_000);
    await db?.end();
    provider?.destroy();
    await service?.stop();
    await pg?.stop();
    hsm?.remove();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("holds local (made, raw, keystore) and PKCS#11 wallets, each signing a mint; the store keeps only sealed keys", async function () {
    this.timeout(90_000);
    const keystore = JSON.parse(await keystoreKey.encrypt("pg keystore password")) as Record<string, unknown>;
    const made = [
      await root.createWallet({ kind: "local", label: "made" }),
      await root.createWallet({ kind: "local", label: "raw", privateKey: imported.privateKey }),
      await root.createWallet({ kind: "local", label: "keystore", keystore, password: "pg keystore password" }),
      await root.createWallet({ kind: "pkcs11", label: "hsm", keyLabel: "pg-key" }),
    ];
    for (const wallet of made) {
      await fund(provider, wallet.address);
      const res = await root.post("/nft/mint", { from: wallet.label, contractAddress: collection, mintAmount: 1 });
      expect(res.status, res.text).to.equal(200);
      expect((await provider.getTransaction(res.body.transactionHash))!.from).to.equal(wallet.address);
    }
    const { rows } = await db.query(
      "SELECT label, kind, length(key_ciphertext) AS sealed, length(key_nonce) AS nonce, length(key_tag) AS tag, pkcs11_key_label FROM wallets ORDER BY created_at",
    );
    expect(rows).to.deep.equal([
      { label: "made", kind: "local", sealed: 32, nonce: 12, tag: 16, pkcs11_key_label: null },
      { label: "raw", kind: "local", sealed: 32, nonce: 12, tag: 16, pkcs11_key_label: null },
      { label: "keystore", kind: "local", sealed: 32, nonce: 12, tag: 16, pkcs11_key_label: null },
      { label: "hsm", kind: "pkcs11", sealed: null, nonce: null, tag: null, pkcs11_key_label: "pg-key" },
    ]);
  });

  it("past the daily spend limit: 409 SPEND_LIMIT_EXCEEDED, and no operation, no nonce and no spend recorded for it", async function () {
    await root.patch(`/wallets/${imported.address}`, { dailySpendLimit: parseEther("0.015").toString() });
    const state = async () => ({
      operations: (
        await db.query("SELECT count(*)::int AS n FROM operations WHERE from_address = $1", [imported.address])
      ).rows[0].n,
      nonce: (await db.query("SELECT next_nonce::int AS n FROM nonces WHERE address = $1", [imported.address])).rows[0]
        ?.n,
      spent: (await db.query("SELECT spent::text AS s FROM wallet_spend WHERE address = $1", [imported.address]))
        .rows[0]?.s,
      chainNonce: await provider.getTransactionCount(imported.address, "pending"),
    });
    const mint = () => root.post("/nft/mint", { from: "raw", contractAddress: collection, mintAmount: 1 });
    expect((await mint()).status).to.equal(200); // the first fits under 0.015 ether
    const before = await state();
    expectError(await mint(), 409, "SPEND_LIMIT_EXCEEDED");
    expect(await state()).to.deep.equal(before);
  });

  it("eight concurrent mints: only as many as the limit covers confirm (each reservation is one atomic statement in the database)", async function () {
    const wallet = await root.createWallet({ kind: "local", label: "racing" });
    await fund(provider, wallet.address);
    await root.patch(`/wallets/${wallet.address}`, { dailySpendLimit: parseEther("0.035").toString() });
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        root.post("/nft/mint", { from: "racing", contractAddress: collection, mintAmount: 1 }),
      ),
    );
    expect(answers.filter((r) => r.status === 200).length, answers.map((r) => r.text).join("\n")).to.equal(3);
    expect(answers.filter((r) => r.status === 409).length).to.equal(5);
    const { rows } = await db.query("SELECT spent::text AS s FROM wallet_spend WHERE address = $1", [wallet.address]);
    expect(BigInt(rows[0].s) <= parseEther("0.035")).to.equal(true);
  });

  it("DELETE erases the wallet's row and sealed key, with its audit event in the same store", async function () {
    const res = await root.delete(`/wallets/${imported.address}`);
    expect(res.status, res.text).to.equal(204);
    expect((await db.query("SELECT 1 FROM wallets WHERE address = $1", [imported.address])).rowCount).to.equal(0);
    const { rows } = await db.query("SELECT action, target_id FROM audit_events ORDER BY id DESC LIMIT 1");
    expect(rows[0]).to.deep.equal({ action: "wallet.deleted", target_id: imported.address });
  });

  it("secrets: none in the responses, the log, or a pg_dump of the store (keys, master key, PIN)", async function () {
    expectNoSecretsIn(api.responseTexts, service.output());
    const bin = await findPostgresBin();
    const { stdout } = await run(bin ? path.join(bin, "pg_dump") : "pg_dump", ["--no-owner", databaseUrl], {
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(stdout).to.include("CREATE TABLE public.wallets");
    expect(secretsInText(stdout)).to.deep.equal([]);
  });
});
