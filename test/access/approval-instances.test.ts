/**
 * Approvals on two instances of one PostgreSQL database (API.md, "Approvals": "two approvals of
 * one id send one transaction", across instances too). Two operators approve the same held write at
 * the same moment, one on each instance: one answers the write, the other 409 APPROVAL_NOT_PENDING,
 * one transaction reaches the chain, and the loser's nonce is given back (the next write of the
 * wallet is not stuck behind a gap).
 */
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import type { JsonRpcProvider, Wallet } from "ethers";
import { expectError } from "../api/expectations";
import {
  ChainNode,
  collectionAt,
  deployDirectly,
  directProvider,
  fundedWallet,
  ServiceProcess,
  sleep,
  usedSecrets,
  type ApiResponse,
} from "../api/harness";
import { startPostgresServer, type PostgresServer } from "../users/postgres-server";
import { AccessClient, bearer, ROOT, type MadeKey } from "./fixture";

describe("Approvals on two instances of one PostgreSQL database", function () {
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let postgres: PostgresServer;
  let first: ServiceProcess;
  let second: ServiceProcess;
  let one: AccessClient;
  let two: AccessClient;
  /** Owns the collection; a wallet both instances hold (label "owner"). */
  let owner: Wallet;
  let collection: string;
  /** Its mints above 5 wait for a decision. */
  let agent: MadeKey;
  let boss: MadeKey;
  let boss2: MadeKey;

  before(async function () {
    this.timeout(180_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    postgres = await startPostgresServer();
    const masterKey = randomBytes(32).toString("hex");
    usedSecrets.add(masterKey);
    const env = { DATABASE_URL: await postgres.createDatabase(), WALLET_MASTER_KEY: masterKey, TX_TIMEOUT_MS: "30000" };
    // One after the other: the first migrates the database.
    first = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
    second = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
    one = new AccessClient(first.url);
    two = new AccessClient(second.url);
    owner = await fundedWallet(provider);
    usedSecrets.add(owner.privateKey);
    collection = await deployDirectly(owner.connect(provider));
    const held = await one.post("/wallets", { kind: "local", label: "owner", privateKey: owner.privateKey }, ROOT);
    expect(held.status, held.text).to.equal(201);
    agent = await one.makeKey({
      name: "agent",
      scopes: ["nft:mintForFree", "nft:read"],
      approval: { mintAmountAbove: 5 },
    });
    boss = await one.makeKey({ name: "boss", scopes: ["approvals:decide"] });
    boss2 = await two.makeKey({ name: "boss2", scopes: ["approvals:decide"] });
  });

  after(async function () {
    this.timeout(60_000);
    provider?.destroy();
    await Promise.all([first?.stop(), second?.stop()]);
    await postgres?.stop();
    await node?.stop();
  });

  const supply = async () => (await collectionAt(collection, provider).totalSupply()) as bigint;
  const nonce = () => provider.getTransactionCount(owner.address);
  const mint = (client: AccessClient, mintAmount: number) =>
    client.post("/nft/mintForFree", { from: "owner", contractAddress: collection, mintAmount }, bearer(agent.key));

  /** The operation, read on `client` until it is final. */
  async function finalOn(client: AccessClient, id: string): Promise<ApiResponse> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await client.getAs(`/nft/operations/${id}`, ROOT);
      expect(res.status, res.text).to.equal(200);
      if (res.body.status === "confirmed" || res.body.status === "failed" || Date.now() > deadline) return res;
      await sleep(200);
    }
  }

  for (let round = 1; round <= 3; round++) {
    it(`round ${round}: one held mint approved at once on both instances is sent once; the other answers 409; the wallet's next write is not stuck`, async function () {
      this.timeout(90_000);
      const held = await mint(round % 2 === 1 ? one : two, 6 + round);
      expect(held.status, held.text).to.equal(202);
      expect(held.body.status).to.equal("awaiting_approval");
      const id = held.body.approvalId as string;
      const [supplyBefore, nonceBefore] = await Promise.all([supply(), nonce()]);

      const answers = await Promise.all([
        one.post(`/approvals/${id}/approve`, {}, bearer(boss.key)),
        two.post(`/approvals/${id}/approve`, {}, bearer(boss2.key)),
      ]);
      const statuses = answers.map((a) => a.status);
      const texts = answers.map((a) => a.text).join("\n");
      expect(
        statuses.filter((s) => s === 409),
        texts,
      ).to.have.length(1);
      expect(
        statuses.filter((s) => s === 200 || s === 202),
        texts,
      ).to.have.length(1);
      expectError(
        answers.find((a) => a.status === 409)!,
        409,
        "APPROVAL_NOT_PENDING",
      );

      // Both instances see it confirmed; the chain holds one transaction of it.
      for (const client of [one, two]) {
        const op = await finalOn(client, held.body.operationId as string);
        expect(op.body.status, op.text).to.equal("confirmed");
      }
      expect(await supply()).to.equal(supplyBefore + BigInt(6 + round));
      expect(await nonce()).to.equal(nonceBefore + 1);

      // The loser took no nonce for good: the next write of the wallet, on either instance, is mined.
      const next = await mint(round % 2 === 1 ? two : one, 1);
      expect(next.status, next.text).to.equal(200);
      expect(next.body.status).to.equal("confirmed");
      expect(await nonce()).to.equal(nonceBefore + 2);
      await sleep(1_000);
      expect(await supply()).to.equal(supplyBefore + BigInt(6 + round) + 1n);
    });
  }
});
