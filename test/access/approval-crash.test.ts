/**
 * Issue 66, "Approvals", exactly once: a SIGKILL between an approval and its send. The service
 * (PGlite, a real automining `hardhat node`) dies with CRASH_AT at the approve's step; started
 * again on the same store, it sends the write once with no request at all: the minter's nonce up by
 * exactly 1, the supply by exactly the amount, the operation confirmed; approving again is 409 and
 * sends nothing.
 */
import { rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Wallet, type JsonRpcProvider } from "ethers";
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
} from "../api/harness";
import { seededDataDir } from "../support/pglite-template";
import { AccessClient, bearer, ROOT, type MadeKey } from "./fixture";

describe("Approvals: a crash between an approval and its send (PGlite, a real node)", function () {
  this.timeout(180_000);
  let node: ChainNode;
  let provider: JsonRpcProvider;
  /** Owns the collection; a wallet the service holds (label "owner"). */
  let owner: Wallet;
  let collection: string;
  let dataDir: string;
  const masterKey = randomBytes(32).toString("hex");
  usedSecrets.add(masterKey);
  const AMOUNT = 7; // above the rule's mintAmountAbove: held
  const env = () => ({ DATA_DIR: dataDir, WALLET_MASTER_KEY: masterKey, TX_TIMEOUT_MS: "5000", BLOCK_POLL_MS: "100" });

  before(async function () {
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
  });

  beforeEach(async function () {
    dataDir = await seededDataDir("approval-crash-");
    // A fresh owner per test: its nonces are its own.
    owner = await fundedWallet(provider);
    usedSecrets.add(owner.privateKey);
    collection = await deployDirectly(owner.connect(provider));
  });

  afterEach(function () {
    rmSync(dataDir, { recursive: true, force: true });
  });

  after(async function () {
    provider?.destroy();
    await node?.stop();
  });

  const nonce = () => provider.getTransactionCount(owner.address);
  const supply = async () => (await collectionAt(collection, provider).totalSupply()) as bigint;

  for (const step of ["approved", "broadcast"] as const) {
    it(`killed at "${step}" of the approve: sent once after the restart, with no request; approving again is 409 and sends nothing`, async function () {
      // The first process: the owner's wallet, a key whose mints above 5 wait, a key that decides.
      const first = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: { ...env(), CRASH_AT: step } });
      const api = new AccessClient(first.url);
      const held = await api.post("/wallets", { kind: "local", label: "owner", privateKey: owner.privateKey }, ROOT);
      expect(held.status, held.text).to.equal(201);
      const agent: MadeKey = await api.makeKey({
        name: "agent",
        scopes: ["nft:mintForFree", "nft:read"],
        approval: { mintAmountAbove: 5 },
      });
      const boss: MadeKey = await api.makeKey({ name: "boss", scopes: ["approvals:decide"] });
      const nonceBefore = await nonce();
      const supplyBefore = await supply();

      const mint = await api.post(
        "/nft/mintForFree",
        { from: "owner", contractAddress: collection, mintAmount: AMOUNT },
        bearer(agent.key),
      );
      expect(mint.status, mint.text).to.equal(202);
      expect(mint.body.status).to.equal("awaiting_approval");
      const { operationId, approvalId } = mint.body as { operationId: string; approvalId: string };

      // Approve: the process dies at the step, before it answers.
      const answer = await api.post(`/approvals/${approvalId}/approve`, {}, bearer(boss.key)).catch(() => null);
      expect(answer, `the process answered ${answer?.status} ${answer?.text}`).to.equal(null);
      expect((await first.exited()).signal).to.equal("SIGKILL");
      if (step === "approved") expect(await nonce(), "nothing was broadcast before the crash").to.equal(nonceBefore);

      // The same store again, with no crash point: the write goes out by itself, once.
      const second = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: env() });
      try {
        const again = new AccessClient(second.url);
        const deadline = Date.now() + 30_000;
        for (;;) {
          const op = await again.getAs(`/nft/operations/${operationId}`, bearer(agent.key));
          expect(op.status, op.text).to.equal(200);
          if (op.body.status === "confirmed") break;
          if (Date.now() > deadline)
            throw new Error(`operation still ${op.body.status} after the restart (nonce ${await nonce()})`);
          await sleep(200);
        }
        expect(await nonce()).to.equal(nonceBefore + 1);
        expect(await supply()).to.equal(supplyBefore + BigInt(AMOUNT));

        // The operator, who never got an answer, approves again: decided already, nothing sent.
        expectError(
          await again.post(`/approvals/${approvalId}/approve`, {}, bearer(boss.key)),
          409,
          "APPROVAL_NOT_PENDING",
        );
        const approval = await again.getAs("/approvals?status=approved", bearer(boss.key));
        expect(approval.body.approvals.map((a: { id: string }) => a.id)).to.include(approvalId);
        // A follower scan or two later, still once on chain.
        await sleep(2_500);
        expect(await nonce()).to.equal(nonceBefore + 1);
        expect(await supply()).to.equal(supplyBefore + BigInt(AMOUNT));
        const op = await again.getAs(`/nft/operations/${operationId}`, bearer(agent.key));
        expect(op.body.status).to.equal("confirmed");
        expect(op.body.transactionHashes).to.have.length(1);
      } finally {
        await second.stop();
      }
    });
  }
});
