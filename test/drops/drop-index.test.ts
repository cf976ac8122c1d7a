import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet, type Contract, type JsonRpcProvider } from "ethers";
import { Client } from "pg";
import { DEFAULT_COLLECTION, deployTransaction } from "../../server/chain/collection";
import { openDatabase } from "../../server/db";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  collectionAt,
  directProvider,
  fundedWallet,
  sleep,
} from "../api/harness";
import { headOf, indexedTo, ROOT_KEY } from "../collections/fixture";
import { ChainControl } from "../support/chain-control";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";

type Rows = Array<Record<string, unknown>>;

/** Where each backend's service keeps its data, and how a test reads it there. */
interface Backend {
  env: Record<string, string>;
  /** Runs `sql` on the service's store: PGlite's one process at a time, so the service is stopped meanwhile. */
  query(sql: string, params: unknown[]): Promise<Rows>;
  release(): Promise<void>;
}

const MINTS = "SELECT account, amount::text AS amount, transaction_hash FROM index_allowlist_mints";
const REDEMPTIONS = "SELECT voucher_id, recipient, transaction_hash FROM index_voucher_redemptions";

let postgres: Promise<PostgresServer> | undefined;

after(async function () {
  this.timeout(60_000);
  if (postgres) await (await postgres).stop();
});

for (const kind of ["PGlite", "PostgreSQL"] as const) {
  describe(`The index knows drops on ${kind}: allowlist mints and voucher redemptions from their events, undone by a reorg`, function () {
    let node: ChainNode;
    let provider: JsonRpcProvider;
    let chain: ChainControl;
    let service: ServiceProcess;
    let api: ApiClient;
    let backend: Backend;
    let nft: Contract;
    let collection: string;
    let owner: Wallet;
    let signer: Wallet;
    let buyer: Wallet;

    /** Starts the service on the backend's store; a PGlite data dir is kept across restarts. */
    const startService = async () => {
      service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: { BLOCK_POLL_MS: "100", ...backend.env } });
      api = new ApiClient(service.url);
    };

    async function openBackend(): Promise<Backend> {
      if (kind === "PGlite") {
        const dataDir = mkdtempSync(path.join(tmpdir(), "drop-index-"));
        return {
          env: { DATA_DIR: dataDir },
          async query(sql, params) {
            await service.stop();
            const db = await openDatabase({ dataDir: path.join(dataDir, "pglite") });
            try {
              return (await db.query<Record<string, unknown>>(sql, params)).rows;
            } finally {
              await db.close();
              await startService();
            }
          },
          release: async () => rmSync(dataDir, { recursive: true, force: true }),
        };
      }
      postgres ??= startPostgresServer();
      const databaseUrl = await (await postgres).createDatabase();
      const client = new Client({ connectionString: databaseUrl });
      await client.connect();
      return {
        env: { DATABASE_URL: databaseUrl },
        query: async (sql, params) => (await client.query(sql, params)).rows as Rows,
        release: () => client.end(),
      };
    }

    before(async function () {
      this.timeout(150_000);
      node = await ChainNode.start();
      provider = directProvider(node.rpcUrl);
      chain = new ChainControl(node.rpcUrl);
      backend = await openBackend();
      owner = new Wallet(DEV_KEYS[7], provider);
      [signer, buyer] = [
        (await fundedWallet(provider)).connect(provider),
        (await fundedWallet(provider)).connect(provider),
      ];
      const sent = await owner.sendTransaction(
        await deployTransaction({ ...DEFAULT_COLLECTION, voucherSigner: signer.address }),
      );
      const deployed = (await sent.wait())!;
      collection = deployed.contractAddress!;
      nft = collectionAt(collection, provider);
      await startService();
      const res = await api.post("/collections", { address: collection, fromBlock: deployed.blockNumber }, ROOT_KEY);
      expect(res.status, res.text).to.equal(201);
    });

    after(async function () {
      this.timeout(60_000);
      provider?.destroy();
      await service?.stop();
      await node?.stop();
      await backend?.release();
    });

    /** GET until `check` holds of the answer (the index follows the chain within a poll or two). */
    async function eventually(url: string, check: (body: Record<string, unknown>) => boolean) {
      for (const deadline = Date.now() + 20_000; ; await sleep(100)) {
        const res = await api.get(url);
        expect(res.status, res.text).to.equal(200);
        if (check(res.body)) return res.body;
        if (Date.now() > deadline) throw new Error(`${url} still answers ${res.text}`);
      }
    }

    it("an allowlist mint and a voucher redemption sent straight to the chain are answered from the index; a reorg undoes both", async function () {
      this.timeout(300_000);
      const listed = await api.request("PUT", `/collections/${collection}/allowlist`, {
        json: {
          privateKey: owner.privateKey,
          entries: [
            { address: buyer.address, allowance: "3", price: "0" },
            { address: signer.address, allowance: "1", price: "0" },
          ],
        },
      });
      expect(listed.status, listed.text).to.equal(200);
      const made = await api.post(`/collections/${collection}/vouchers`, {
        privateKey: signer.privateKey,
        to: buyer.address,
        amount: "2",
        price: "0",
      });
      expect(made.status, made.text).to.equal(200);
      const voucherUrl = `/collections/${collection}/vouchers/${made.body.voucher.id}`;
      const entryUrl = `/collections/${collection}/allowlist/${buyer.address}`;
      const { proof } = (await api.get(entryUrl)).body as { proof: string[] };
      await indexedTo(api, collection, await headOf(provider));

      const snapshot = await chain.snapshot();
      const asBuyer = nft.connect(buyer) as Contract;
      const minted = await (await asBuyer.allowlistMint(2n, 3n, 0n, proof)).wait();
      const redeemed = await (await asBuyer.mintWithVoucher(made.body.voucher, made.body.signature)).wait();

      // Answered at once: the route waits for the index to reach the head it sees.
      const entry = await api.get(entryUrl);
      expect(entry.status, entry.text).to.equal(200);
      expect(entry.body).to.include({ allowance: "3", minted: "2", remaining: "1" });
      const voucher = await api.get(voucherUrl);
      expect(voucher.body).to.include({
        state: "used",
        transactionHash: redeemed.hash,
        blockNumber: redeemed.blockNumber,
      });
      const lower = (s: string) => s.toLowerCase();
      expect(await backend.query(`${MINTS} WHERE transaction_hash = $1`, [lower(minted.hash)])).to.deep.equal([
        { account: lower(buyer.address), amount: "2", transaction_hash: lower(minted.hash) },
      ]);
      expect(await backend.query(`${REDEMPTIONS} WHERE transaction_hash = $1`, [lower(redeemed.hash)])).to.deep.equal([
        {
          voucher_id: lower(made.body.voucher.id),
          recipient: lower(buyer.address),
          transaction_hash: lower(redeemed.hash),
        },
      ]);

      // The blocks of both are replaced by a longer branch without them.
      expect(await chain.revert(snapshot)).to.equal(true);
      await chain.mine(4);
      await eventually(entryUrl, (body) => body.minted === "0");
      expect((await api.get(entryUrl)).body).to.include({ minted: "0", remaining: "3" });
      const unused = await eventually(voucherUrl, (body) => body.state === "unused");
      expect(unused).to.not.have.property("transactionHash");
      expect(await nft.allowlistMinted(buyer.address)).to.equal(0n);
      expect(await nft.voucherUsed(made.body.voucher.id)).to.equal(false);
      expect(await backend.query(MINTS, [])).to.deep.equal([]);
      expect(await backend.query(REDEMPTIONS, [])).to.deep.equal([]);
    });
  });
}
