import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet, ZeroAddress, type JsonRpcProvider } from "ethers";
import type { NFTEditions } from "../../typechain-types";
import { NFTEditions__factory } from "../../typechain-types";
import {
  ApiClient,
  ChainNode,
  deployDirectly,
  DEV_KEYS,
  directProvider,
  ServiceProcess,
  type JsonBody,
} from "../api/harness";
import { runCli } from "../support/nft-ops-cli";
import { fund, KeyedClient, newMasterKey, ROOT_AUTH } from "../wallets/fixture";
import { parseRowsCsv, postCsv, randomAddress, transferOwnership, waitForJob } from "./fixture";

/** The editions the contract is given, as editionsFixture makes them: ids 1 and 2 (room for every test's tokens). */
const CAPPED = { id: 1n, cost: 10n ** 16n, maxSupply: 10_000n, maxPerTx: 3n };
const OPEN = { id: 2n, cost: 2n * 10n ** 16n, maxSupply: 0n, maxPerTx: 10n };

describe("jobs on an ERC-1155 edition contract: airdrops with a tokenId column, whitelists as they are", function () {
  this.timeout(240_000);
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let service: ServiceProcess;
  let root: KeyedClient;
  let editions: NFTEditions;
  let editionsAddress: string;
  /** An ERC-721 collection, owned by the treasury too. */
  let collection: string;

  before(async function () {
    this.timeout(240_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    const deployer = new Wallet(DEV_KEYS[0], provider);
    editions = await new NFTEditions__factory(deployer).deploy(
      "Test Editions",
      "TEDS",
      "ipfs://QmBase/",
      ZeroAddress,
      0n,
      ZeroAddress,
    );
    await editions.waitForDeployment();
    editionsAddress = await editions.getAddress();
    for (const e of [CAPPED, OPEN]) await (await editions.createEdition(e.cost, e.maxSupply, e.maxPerTx)).wait();
    collection = await deployDirectly(deployer, { maxSupply: 1_000n });
    service = await ServiceProcess.start({
      rpcUrl: node.rpcUrl,
      // Small batches: a few dozen rows take several, so a job's editions are cut in batches of their own.
      env: { WALLET_MASTER_KEY: newMasterKey(), BLOCK_POLL_MS: "100", LOG_LEVEL: "warn", MAX_GAS_PER_TX: "600000" },
    });
    root = new KeyedClient(new ApiClient(service.url));
    const treasury = await root.createWallet({ kind: "local", label: "treasury" });
    await fund(provider, treasury.address as string, 1_000n * 10n ** 18n);
    await (await editions.transferOwnership(treasury.address as string)).wait();
    await transferOwnership(deployer, collection, treasury.address as string);
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await node?.stop();
  });

  const balanceOf = (address: string, id: bigint) => editions.balanceOf(address, id);
  const supplyOf = (id: bigint) => editions["totalSupply(uint256)"](id);

  it("airdrops a CSV across two editions: each batch one edition, every balance per (holder, id) on chain, the rows with their tokenId", async () => {
    const first = Array.from({ length: 30 }, () => randomAddress());
    const second = Array.from({ length: 12 }, () => randomAddress());
    // Columns in the header's order (tokenId first); rows of the two editions mixed; one address twice in edition 1,
    // once in edition 2 too: merged per edition, not across them.
    const lines = ["tokenId,address,amount"];
    first.forEach((address, i) => {
      lines.push(`1,${address},${(i % 3) + 1}`);
      if (i < second.length) lines.push(`2,${second[i]},${i + 1}`);
    });
    lines.push(`1,${first[0].toLowerCase()},4`, `2,${first[0]},7`);
    const expected = new Map<string, bigint>(); // `${id}:${address}` → amount
    const add = (id: bigint, address: string, amount: bigint) =>
      expected.set(`${id}:${address}`, (expected.get(`${id}:${address}`) ?? 0n) + amount);
    first.forEach((address, i) => add(1n, address, BigInt((i % 3) + 1)));
    second.forEach((address, i) => add(2n, address, BigInt(i + 1)));
    add(1n, first[0], 4n);
    add(2n, first[0], 7n);
    const total = (id: bigint) =>
      [...expected].filter(([key]) => key.startsWith(`${id}:`)).reduce((sum, [, amount]) => sum + amount, 0n);
    const [before1, before2] = [await supplyOf(1n), await supplyOf(2n)];

    const res = await postCsv(
      root,
      { kind: "airdrop", contractAddress: editionsAddress, from: "treasury" },
      `${lines.join("\n")}\n`,
    );
    expect(res.status, res.text).to.equal(202);
    expect(res.body).to.include({ status: "running", rows: expected.size });
    expect(res.body.batches).to.be.at.least(3);
    const job = await waitForJob(root, res.body.jobId as string, ["completed", "failed", "paused"]);
    expect(job.status, JSON.stringify(job.error)).to.equal("completed");
    expect(job.rowsByState).to.deep.equal({ pending: 0, sent: 0, confirmed: expected.size, failed: 0 });

    // The chain: each holder's balance of each edition is its rows' sum, and each supply grew by its rows' sum.
    expect(await supplyOf(1n)).to.equal(before1 + total(1n));
    expect(await supplyOf(2n)).to.equal(before2 + total(2n));
    for (const [key, amount] of expected) {
      const [id, address] = key.split(":");
      expect(await balanceOf(address, BigInt(id)), key).to.equal(amount);
    }

    // The rows (JSON and CSV) name their edition; each batch's rows are of one edition, edition 1's first.
    const page = await root.get(`/jobs/${res.body.jobId}/rows?limit=500`);
    expect(page.status, page.text).to.equal(200);
    const rows = page.body.rows as JsonBody[];
    expect(rows).to.have.length(expected.size);
    for (const row of rows) {
      expect(row.status).to.equal("confirmed");
      expect(BigInt(row.amount as string)).to.equal(expected.get(`${row.tokenId}:${row.address}`));
    }
    const ids = rows.map((r) => r.tokenId as string);
    expect(ids.indexOf("2")).to.equal(first.length);
    expect(ids.slice(first.length).every((id) => id === "2")).to.equal(true);
    const csv = await root.api.request("GET", `/jobs/${res.body.jobId}/rows`, {
      headers: { ...ROOT_AUTH, Accept: "text/csv" },
    });
    expect(csv.status).to.equal(200);
    const csvRows = parseRowsCsv(csv.text);
    expect(csvRows.map((r) => r.tokenId)).to.deep.equal(ids);
    // The row each entry first came from: the file's line (the header is line 1).
    expect(csvRows[0].row).to.equal("2");
  });

  it("airdrops JSON rows with tokenId (numbers or strings), dry run first", async () => {
    const [a, b] = [randomAddress(), randomAddress()];
    const body = {
      kind: "airdrop",
      contractAddress: editionsAddress,
      from: "treasury",
      recipients: [
        { address: a, amount: 2, tokenId: 2 },
        { address: b, amount: "1", tokenId: "1" },
        { address: a, amount: 3, tokenId: "2" },
      ],
    };
    const dry = await root.post("/jobs", { ...body, dryRun: true });
    expect(dry.status, dry.text).to.equal(200);
    expect(dry.body).to.include({ dryRun: true, rows: 2, batches: 2 });
    const made = await root.post("/jobs", body);
    expect(made.status, made.text).to.equal(202);
    const job = await waitForJob(root, made.body.jobId as string, ["completed", "failed", "paused"]);
    expect(job.status, JSON.stringify(job.error)).to.equal("completed");
    expect(await balanceOf(a, 2n)).to.equal(5n);
    expect(await balanceOf(b, 1n)).to.equal(1n);
    expect(await balanceOf(a, 1n)).to.equal(0n);
    const rows = (await root.get(`/jobs/${made.body.jobId}/rows`)).body.rows as JsonBody[];
    expect(rows.map((r) => [r.address, r.tokenId, r.amount])).to.deep.equal([
      [a, "2", "5"],
      [b, "1", "1"],
    ]);
  });

  it("400 naming tokenId: a tokenId column on an ERC-721, rows without one on an edition; 404 for an edition that does not exist; nothing made", async () => {
    const jobsBefore = (await root.get("/jobs?limit=500")).body.jobs.length as number;
    const onErc721 = await postCsv(
      root,
      { kind: "airdrop", contractAddress: collection, from: "treasury" },
      `address,amount,tokenId\n${randomAddress()},1,1\n${randomAddress()},1,2\n`,
    );
    expect(onErc721.status, onErc721.text).to.equal(400);
    expect(onErc721.body.error.code).to.equal("VALIDATION_ERROR");
    expect(onErc721.body.error.details.map((d: JsonBody) => d.path)).to.deep.equal(["tokenId"]);
    expect(onErc721.body.error.message).to.include("ERC-721").and.include("row 2, row 3");
    const jsonOnErc721 = await root.post("/jobs", {
      kind: "airdrop",
      contractAddress: collection,
      from: "treasury",
      recipients: [{ address: randomAddress(), amount: 1, tokenId: "1" }],
    });
    expect(jsonOnErc721.status, jsonOnErc721.text).to.equal(400);
    expect(jsonOnErc721.body.error.details[0].path).to.equal("tokenId");

    // On the edition contract: rows 3 and 5 give none (an empty field, no field), row 4 a bad one.
    const without = await postCsv(
      root,
      { kind: "airdrop", contractAddress: editionsAddress, from: "treasury" },
      `address,amount,tokenId\n${randomAddress()},1,1\n${randomAddress()},1,\n${randomAddress()},1,x\n${randomAddress()},1\n`,
    );
    expect(without.status, without.text).to.equal(400);
    expect(without.body.error.code).to.equal("VALIDATION_ERROR");
    const details = without.body.error.details as JsonBody[];
    expect(details.map((d) => d.path)).to.deep.equal(["row 3", "row 4", "row 5"]);
    expect(details.every((d) => (d.message as string).includes("tokenId"))).to.equal(true);
    expect(details[0].message).to.include("ERC-1155");

    const missing = await root.post("/jobs", {
      kind: "airdrop",
      contractAddress: editionsAddress,
      from: "treasury",
      recipients: [
        { address: randomAddress(), amount: 1, tokenId: 1 },
        { address: randomAddress(), amount: 1, tokenId: 9 },
      ],
    });
    expect(missing.status, missing.text).to.equal(404);
    expect(missing.body.error.code).to.equal("TOKEN_NOT_FOUND");
    expect(missing.body.error.details).to.deep.equal([{ path: "row 2", message: "no edition 9" }]);
    expect((await root.get("/jobs?limit=500")).body.jobs).to.have.length(jobsBefore);
  });

  it("runs a whitelist job on the edition contract as on a collection (the same functions)", async () => {
    const addresses = [randomAddress(), randomAddress(), randomAddress()];
    const made = await root.post("/jobs", {
      kind: "whitelist",
      contractAddress: editionsAddress,
      from: "treasury",
      addresses,
    });
    expect(made.status, made.text).to.equal(202);
    const job = await waitForJob(root, made.body.jobId as string, ["completed", "failed", "paused"]);
    expect(job.status, JSON.stringify(job.error)).to.equal("completed");
    for (const address of addresses) expect(await editions.whitelisted(address), address).to.equal(true);
    const rows = (await root.get(`/jobs/${made.body.jobId}/rows`)).body.rows as JsonBody[];
    expect(rows.map((r) => r.state)).to.deep.equal(["whitelisted", "whitelisted", "whitelisted"]);
    expect(rows.every((r) => r.tokenId === undefined)).to.equal(true);
  });

  it("the CLI: edition create prints the new tokenId, and a CSV with a tokenId column runs as a job; usage errors and refusals exit 2", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "nft-ops-editions-"));
    const cli = (args: string[]) => runCli(service.url, args);
    try {
      const create = ["edition", "create", "--collection", editionsAddress, "--from", "treasury", "--cost", "0"];
      const usage = await cli([...create, "--max-per-tx", "5"]);
      expect(usage.code, usage.out).to.equal(2);
      expect(usage.out).to.include("--max-supply is required");
      const notWhole = await cli([...create, "--max-supply", "1.5", "--max-per-tx", "5"]);
      expect(notWhole.code, notWhole.out).to.equal(2);
      expect(notWhole.out).to.include("--max-supply must be a whole number");

      const editionsBefore = await editions.editionCount();
      const made = await cli([...create, "--max-supply", "0", "--max-per-tx", "5"]);
      expect(made.code, made.out).to.equal(0);
      const id = editionsBefore + 1n;
      expect(made.out).to.include(`tokenId ${id}\n`);
      expect(await editions.editionCount()).to.equal(id);
      expect(await editions.maxSupply(id)).to.equal(0n);

      // On the ERC-721 collection: the service's 400, printed, nothing made.
      const onErc721 = await cli([
        "edition",
        "create",
        "--collection",
        collection,
        "--from",
        "treasury",
        "--cost",
        "0",
        "--max-supply",
        "0",
        "--max-per-tx",
        "5",
      ]);
      expect(onErc721.code, onErc721.out).to.equal(2);
      expect(onErc721.out).to.include("400 VALIDATION_ERROR");

      // The new edition airdropped from a CSV with a tokenId column.
      const holders = [randomAddress(), randomAddress(), randomAddress()];
      const file = path.join(dir, "prints.csv");
      writeFileSync(file, `address,amount,tokenId\n${holders.map((a, i) => `${a},${i + 1},${id}`).join("\n")}\n`);
      const ran = await cli(["job", "airdrop", file, "--collection", editionsAddress, "--from", "treasury"]);
      expect(ran.code, ran.out).to.equal(0);
      expect(ran.out).to.include("completed: 3 confirmed, 0 failed");
      for (const [i, holder] of holders.entries()) expect(await balanceOf(holder, id)).to.equal(BigInt(i + 1));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
