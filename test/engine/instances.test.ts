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

// Issue 43: the same test with two chains configured (two nodes, their own ids), the mints split between them.
const SETUPS = [
  { title: "", chains: [31_337] },
  { title: ", two chains", chains: [31_421, 31_422] },
];

for (const setup of SETUPS) {
  describe(`several service processes on one PostgreSQL${setup.title}`, function () {
    const several = setup.chains.length > 1;
    let nodes: ChainNode[] = [];
    let pg: PostgresServer | undefined;
    let services: ServiceProcess[] = [];
    let clients: ApiClient[];
    let providers: JsonRpcProvider[] = [];
    let collection: string;
    const minter = new Wallet(DEV_KEYS[6]);

    before(async function () {
      this.timeout(120_000);
      const [database, ...chains] = await Promise.all([
        startPostgresServer(),
        ...setup.chains.map((id) => ChainNode.start(undefined, several ? id : undefined)),
      ]);
      nodes = chains as ChainNode[];
      pg = database as PostgresServer;
      const databaseUrl = await pg.createDatabase();
      const env = { DATABASE_URL: databaseUrl, BLOCK_POLL_MS: "100", TX_TIMEOUT_MS: "30000" };
      const target = several
        ? { chains: setup.chains.map((id, i) => ({ id, rpcUrls: [nodes[i].rpcUrl] })) }
        : { rpcUrl: nodes[0].rpcUrl };
      // The three services need no contract to start: deploy while they start, all at once (the
      // deployer's first contract on each chain: the same address on every chain).
      const [deployed, ...started] = await Promise.allSettled([
        Promise.all(nodes.map((n) => deployWithScript(n.rpcUrl, { NFT_MAX_SUPPLY: "100000" }))),
        ...[0, 1, 2].map(() => ServiceProcess.start({ ...target, env })),
      ]);
      services = started.flatMap((s) => (s.status === "fulfilled" ? [s.value as ServiceProcess] : []));
      const failure = [deployed, ...started].find((s) => s.status === "rejected");
      if (failure) throw (failure as PromiseRejectedResult).reason;
      const addresses = (deployed as PromiseFulfilledResult<string[]>).value;
      expect(new Set(addresses).size).to.equal(1);
      collection = addresses[0];
      clients = services.map((s) => new ApiClient(s.url));
      providers = nodes.map((n, i) => directProvider(n.rpcUrl, setup.chains[i]));
      for (const n of nodes) {
        const control = new ChainControl(n.rpcUrl);
        await control.setAutomine(false);
        await control.setIntervalMining(1_000);
      }
    });

    after(async function () {
      this.timeout(60_000);
      for (const p of providers) p.destroy();
      await Promise.all(services.map((s) => s.stop()));
      await Promise.all(nodes.map((n) => n.stop()));
      await pg?.stop();
    });

    it(`${MINTS} mints from one key at once, round-robin over 3 processes${several ? " and 2 chains" : ""}, with 1 s blocks: all accepted, all confirmed, supply and nonce +${MINTS} in all`, async function () {
      this.timeout(90_000);
      const chainOf = (i: number) => i % setup.chains.length;
      const perChain = setup.chains.map(
        (_, c) => Array.from({ length: MINTS }, (_, i) => i).filter((i) => chainOf(i) === c).length,
      );
      const nfts = providers.map((p) => collectionAt(collection, p));
      const supplyBefore: bigint[] = await Promise.all(nfts.map((nft) => nft.totalSupply()));
      const nonceBefore = await Promise.all(providers.map((p) => p.getTransactionCount(minter.address, "latest")));

      const answers = await Promise.all(
        Array.from({ length: MINTS }, (_, i) =>
          clients[i % clients.length].post("/nft/mint", {
            privateKey: minter.privateKey,
            contractAddress: collection,
            mintAmount: 1,
            ...(several ? { chain: setup.chains[chainOf(i)] } : {}),
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
      // Nonces and token ids are per chain.
      const perChainDistinct = (field: (op: Record<string, unknown>) => unknown[]) =>
        setup.chains.map((_, c) => new Set(operations.filter((_, i) => chainOf(i) === c).flatMap(field)).size);
      expect(
        perChainDistinct((op) => [op.nonce]),
        "distinct nonces",
      ).to.deep.equal(perChain);
      const tokenIds = (op: Record<string, unknown>) =>
        (op.result as { tokenIds?: string[] } | undefined)?.tokenIds ?? [];
      expect(perChainDistinct(tokenIds), "distinct token ids").to.deep.equal(perChain);
      if (several) {
        expect(operations.map((op) => op.chainId)).to.deep.equal(ids.map((_, i) => String(setup.chains[chainOf(i)])));
      }

      for (const [i, answer] of answers.entries()) {
        if (answer.status !== 200) continue;
        expect(answer.body.status).to.equal("confirmed");
        const receipt = await providers[chainOf(i)].getTransactionReceipt(answer.body.transactionHash as string);
        expect(receipt?.status, `receipt of ${answer.body.transactionHash}`).to.equal(1);
      }

      for (const [c, p] of providers.entries()) {
        expect(await nfts[c].totalSupply(), "totalSupply").to.equal(supplyBefore[c] + BigInt(perChain[c]));
        expect(await p.getTransactionCount(minter.address, "latest"), "the key's nonce").to.equal(
          nonceBefore[c] + perChain[c],
        );
      }
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
}
