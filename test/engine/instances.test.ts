import { expect } from "chai";
import { Wallet, type JsonRpcProvider } from "ethers";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  collectionAt,
  deployWithScript,
  directProvider,
  sleep,
  type ApiResponse,
} from "../api/harness";
import { ChainControl } from "../support/chain-control";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";

const MINTS = 300;
/** How long operations answered 202 are polled until they are confirmed. */
const SETTLE_MS = 45_000;

describe("several service processes on one PostgreSQL", function () {
  let node: ChainNode | undefined;
  let pg: PostgresServer | undefined;
  let services: ServiceProcess[] = [];
  let clients: ApiClient[];
  let provider: JsonRpcProvider;
  let control: ChainControl;
  let collection: string;
  const minter = new Wallet(DEV_KEYS[6]);

  before(async function () {
    this.timeout(120_000);
    const [chain, database] = await Promise.all([ChainNode.start(), startPostgresServer()]);
    node = chain;
    pg = database;
    const databaseUrl = await pg.createDatabase();
    // The three services need no contract to start: deploy while they start, all at once.
    const [deployed, ...started] = await Promise.allSettled([
      deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "100000" }),
      ...[0, 1, 2].map(() =>
        ServiceProcess.start({
          rpcUrl: node!.rpcUrl,
          env: { DATABASE_URL: databaseUrl, BLOCK_POLL_MS: "100", TX_TIMEOUT_MS: "30000" },
        }),
      ),
    ]);
    services = started.flatMap((s) => (s.status === "fulfilled" ? [s.value as ServiceProcess] : []));
    const failure = [deployed, ...started].find((s) => s.status === "rejected");
    if (failure) throw (failure as PromiseRejectedResult).reason;
    collection = (deployed as PromiseFulfilledResult<string>).value;
    clients = services.map((s) => new ApiClient(s.url));
    provider = directProvider(node.rpcUrl);
    control = new ChainControl(node.rpcUrl);
    await control.setAutomine(false);
    await control.setIntervalMining(1_000);
  });

  after(async function () {
    this.timeout(60_000);
    provider?.destroy();
    await Promise.all(services.map((s) => s.stop()));
    await node?.stop();
    await pg?.stop();
  });

  it("300 mints from one key at once, round-robin over 3 processes, with 1 s blocks: all accepted, all confirmed, supply +300, nonce +300", async function () {
    this.timeout(90_000);
    const nft = collectionAt(collection, provider);
    const supplyBefore: bigint = await nft.totalSupply();
    const nonceBefore = await provider.getTransactionCount(minter.address, "latest");

    const answers = await Promise.all(
      Array.from({ length: MINTS }, (_, i) =>
        clients[i % clients.length].post("/nft/mint", {
          privateKey: minter.privateKey,
          contractAddress: collection,
          mintAmount: 1,
        }),
      ),
    );

    const refused = answers.filter((a) => a.status !== 200 && a.status !== 202);
    expect(
      refused.map((a) => `${a.status} ${a.text.slice(0, 300)}`),
      `answers other than 200/202 (${evidence(answers)})`,
    ).to.deep.equal([]);
    const ids = answers.map((a) => a.body.operationId as string);
    expect(new Set(ids).size, "distinct operation ids").to.equal(MINTS);

    const operations = await settle(ids);
    const unconfirmed = operations.filter((op) => op.status !== "confirmed");
    expect(
      unconfirmed.map((op) => `${op.operationId}: ${op.status} ${JSON.stringify(op.error ?? null)}`),
      `operations not confirmed within ${SETTLE_MS} ms; ${warnings()}`,
    ).to.deep.equal([]);
    expect(new Set(operations.map((op) => op.transactionHash)).size, "distinct transactions").to.equal(MINTS);
    expect(new Set(operations.map((op) => op.nonce)).size, "distinct nonces").to.equal(MINTS);
    const tokenIds = operations.flatMap((op) => (op.result as { tokenIds?: string[] } | undefined)?.tokenIds ?? []);
    expect(new Set(tokenIds).size, "distinct token ids").to.equal(MINTS);

    const confirmedAnswers = answers.filter((a) => a.status === 200);
    for (const answer of confirmedAnswers) {
      expect(answer.body.status).to.equal("confirmed");
      const receipt = await provider.getTransactionReceipt(answer.body.transactionHash as string);
      expect(receipt?.status, `receipt of ${answer.body.transactionHash}`).to.equal(1);
    }

    expect(await nft.totalSupply(), "totalSupply").to.equal(supplyBefore + BigInt(MINTS));
    expect(await provider.getTransactionCount(minter.address, "latest"), "the key's nonce").to.equal(
      nonceBefore + MINTS,
    );
  });

  /** Each operation's view, polled (round-robin over the processes) until final or SETTLE_MS ran out. */
  async function settle(ids: string[]): Promise<Array<Record<string, unknown>>> {
    const deadline = Date.now() + SETTLE_MS;
    const views = new Map<string, Record<string, unknown>>();
    let round = 0;
    for (;;) {
      const open = ids.filter((id) => {
        const status = views.get(id)?.status;
        return status !== "confirmed" && status !== "failed";
      });
      if (open.length === 0 || Date.now() > deadline) break;
      await Promise.all(
        open.map(async (id, i) => {
          const res = await clients[(i + round) % clients.length].get(`/nft/operations/${id}`);
          views.set(id, res.status === 200 ? res.body : { operationId: id, status: `GET ${res.status}` });
        }),
      );
      round++;
      if (ids.some((id) => !["confirmed", "failed"].includes(String(views.get(id)?.status)))) await sleep(500);
    }
    return ids.map((id) => views.get(id) ?? { operationId: id, status: "never read" });
  }

  /** Counts of the answers by status, and up to three distinct bodies of those that are not 200. */
  function evidence(answers: ApiResponse[]): string {
    const counts: Record<number, number> = {};
    for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
    const samples = [...new Set(answers.filter((a) => a.status !== 200).map((a) => a.text.slice(0, 200)))];
    return `statuses ${JSON.stringify(counts)}; samples ${samples.slice(0, 3).join(" | ")}`;
  }

  /** The services' warning and error log lines (pino JSON; keys are never logged), a few of each. */
  function warnings(): string {
    return services
      .map((s, i) => {
        const lines = s
          .output()
          .split("\n")
          .filter((line) => /"level":(40|50|60)/.test(line));
        return `service ${i}: ${lines.length} warnings/errors\n${lines.slice(0, 8).join("\n")}`;
      })
      .join("\n");
  }
});
