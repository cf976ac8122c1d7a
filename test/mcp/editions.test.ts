import type { Client } from "@modelcontextprotocol/client";
import { expect } from "chai";
import { Wallet, ZeroAddress } from "ethers";
import { NFTEditions__factory, type NFTEditions } from "../../typechain-types";
import { DEV_KEYS, sleep, TEST_API_KEY, type JsonBody } from "../api/harness";
import { randomAddress } from "../jobs/fixture";
import { client2, startWorld, structured, toolError, type McpWorld } from "./fixture";

describe("MCP on an ERC-1155 edition contract: create_edition, and the mint, airdrop and read tools with tokenId", function () {
  this.timeout(240_000);
  let world: McpWorld;
  let root: Client;
  let editions: NFTEditions;
  let address: string;

  before(async function () {
    this.timeout(240_000);
    // An airdrop of a few dozen recipients passes this, so that one becomes a job.
    world = await startWorld({ MAX_GAS_PER_TX: "600000" });
    root = await client2(world.service.url, TEST_API_KEY);
    // The edition contract, deployed straight on the chain, owned by the service's treasury wallet; no edition yet.
    const deployer = new Wallet(DEV_KEYS[0], world.provider);
    editions = await new NFTEditions__factory(deployer).deploy(
      "Prints",
      "PRNT",
      "ipfs://QmBase/",
      ZeroAddress,
      0n,
      ZeroAddress,
    );
    await editions.waitForDeployment();
    address = await editions.getAddress();
    await (await editions.transferOwnership(world.treasury.address as string)).wait();
  });

  after(async function () {
    this.timeout(30_000);
    await root?.close();
    await world?.stop();
  });

  /** Plans, then commits with the plan's token: both answers. */
  async function planThenCommit(name: string, args: JsonBody): Promise<{ planned: JsonBody; committed: JsonBody }> {
    const planned = structured(await root.callTool({ name, arguments: args }));
    expect(planned.stage, JSON.stringify(planned)).to.equal("plan");
    const committed = structured(await root.callTool({ name, arguments: { ...args, planToken: planned.planToken } }));
    expect(committed.stage).to.equal("commit");
    return { planned, committed };
  }

  it("lists create_edition as a write and get_token as a read; the mint, airdrop, price, pause and token tools take tokenId; deploy_collection takes paymentToken", async () => {
    const { tools } = await root.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get("create_edition")?.annotations).to.include({ readOnlyHint: false, destructiveHint: true });
    expect((byName.get("create_edition")!.inputSchema as JsonBody).required).to.include.members([
      "contractAddress",
      "from",
      "cost",
      "maxSupply",
      "maxMintAmountPerTx",
    ]);
    expect(byName.get("get_token")?.annotations).to.include({ readOnlyHint: true, destructiveHint: false });
    for (const name of ["mint_for_free", "airdrop", "set_cost", "set_paused", "get_token"])
      expect((byName.get(name)!.inputSchema as JsonBody).properties, name).to.have.property("tokenId");
    // deploy_collection's input is the route's body: it takes standard and the payment token too.
    const deploy = (byName.get("deploy_collection")!.inputSchema as JsonBody).properties;
    expect(deploy).to.include.keys("standard", "paymentToken");
  });

  it("create_edition: the plan sends nothing; the commit creates edition 1, then 2, each answered with its tokenId", async () => {
    const args = { contractAddress: address, from: "treasury", cost: "0", maxSupply: "1000", maxMintAmountPerTx: 10 };
    const planned = structured(await root.callTool({ name: "create_edition", arguments: args }));
    expect(BigInt(planned.plan.gas as string) > 0n).to.equal(true);
    expect(await editions.editionCount()).to.equal(0n);
    const committed = structured(
      await root.callTool({ name: "create_edition", arguments: { ...args, planToken: planned.planToken } }),
    );
    expect(committed.result).to.include({ status: "confirmed", tokenId: "1" });
    const repeated = structured(
      await root.callTool({ name: "create_edition", arguments: { ...args, planToken: planned.planToken } }),
    );
    expect(repeated.replayed).to.equal(true);
    expect(await editions.editionCount()).to.equal(1n);
    const open = await planThenCommit("create_edition", { ...args, maxSupply: 0 });
    expect(open.committed.result.tokenId).to.equal("2");
    expect(await editions.maxSupply(2n)).to.equal(0n);
  });

  it("mint_for_free with tokenId: the plan shows the edition, the amount and its supply after; the commit mints exactly that", async () => {
    const receiver = randomAddress();
    const before = await editions["totalSupply(uint256)"](1n);
    const { planned, committed } = await planThenCommit("mint_for_free", {
      contractAddress: address,
      from: "treasury",
      tokenId: "1",
      mintAmount: 3,
      receiver,
    });
    expect(planned.plan.result).to.include({ tokenId: "1", amount: "3", supplyAfter: String(before + 3n) });
    expect(planned.plan.result).to.not.have.property("tokenIds");
    expect(committed.result).to.include({ status: "confirmed", tokenId: "1", amount: "3" });
    expect(await editions.balanceOf(receiver, 1n)).to.equal(3n);
    expect(await editions["totalSupply(uint256)"](1n)).to.equal(before + 3n);

    // get_token reads the edition's supply and max supply (the index once it reflects the mint's block);
    // get_holdings what `from` holds of the contract.
    const minBlock = committed.result.blockNumber as number;
    const edition = structured(
      await root.callTool({ name: "get_token", arguments: { contractAddress: address, tokenId: "1", minBlock } }),
    );
    expect(edition).to.include({ tokenId: "1", supply: String(before + 3n), maxSupply: "1000" });
    const owners = edition.owners as { address: string; amount: string }[];
    expect(owners.find((o) => o.address.toLowerCase() === receiver.toLowerCase())?.amount).to.equal("3");
    const held = structured(
      await root.callTool({
        name: "get_holdings",
        arguments: { contractAddress: address, owner: "treasury", minBlock },
      }),
    );
    expect(held.tokenIds ?? []).to.not.include("1");
  });

  it("a tokenId missing on an edition, or given on an ERC-721, is an isError VALIDATION_ERROR naming tokenId; nothing sent", async () => {
    const nonce = await world.provider.getTransactionCount(world.treasury.address as string);
    const missing = toolError(
      await root.callTool({
        name: "mint_for_free",
        arguments: { contractAddress: address, from: "treasury", mintAmount: 1 },
      }),
    );
    expect(missing.code).to.equal("VALIDATION_ERROR");
    expect(missing.message).to.include("tokenId");
    const misplaced = toolError(
      await root.callTool({
        name: "airdrop",
        arguments: {
          contractAddress: world.collection,
          from: "treasury",
          tokenId: "1",
          recipients: [{ address: randomAddress(), amount: 1 }],
        },
      }),
    );
    expect(misplaced.code).to.equal("VALIDATION_ERROR");
    expect(misplaced.message).to.include("tokenId");
    const unknown = toolError(
      await root.callTool({
        name: "mint_for_free",
        arguments: { contractAddress: address, from: "treasury", tokenId: "9", mintAmount: 1 },
      }),
    );
    expect(unknown.code).to.equal("TOKEN_NOT_FOUND");
    expect(await world.provider.getTransactionCount(world.treasury.address as string)).to.equal(nonce);
  });

  it("airdrop with tokenId: in one transaction, and as a job of rows with that tokenId when too large for one", async () => {
    const few = [1, 2].map((amount) => ({ address: randomAddress(), amount }));
    const small = await planThenCommit("airdrop", {
      contractAddress: address,
      from: "treasury",
      tokenId: "2",
      recipients: few,
    });
    expect(small.planned.plan.result).to.include({ tokenId: "2", amount: "3" });
    expect(small.committed.result).to.include({ status: "confirmed", tokenId: "2" });
    for (const { address: holder, amount } of few)
      expect(await editions.balanceOf(holder, 2n)).to.equal(BigInt(amount));

    const many = Array.from({ length: 40 }, () => ({ address: randomAddress(), amount: 2 }));
    const large = await planThenCommit("airdrop", {
      contractAddress: address,
      from: "treasury",
      tokenId: "2",
      recipients: many,
    });
    expect(large.planned).to.include({ job: true });
    expect(large.planned.plan).to.include({ dryRun: true, rows: 40 });
    expect(large.committed.job).to.equal(true);
    const jobId = large.committed.result.jobId as string;
    let job: JsonBody;
    for (const deadline = Date.now() + 60_000; ; await sleep(250)) {
      job = structured(await root.callTool({ name: "get_job", arguments: { id: jobId } }));
      if (job.status !== "running" || Date.now() > deadline) break;
    }
    expect(job.status, JSON.stringify(job.error)).to.equal("completed");
    for (const { address: holder } of many) expect(await editions.balanceOf(holder, 2n), holder).to.equal(2n);
    const rows = await world.root.get(`/jobs/${jobId}/rows?limit=100`);
    expect((rows.body.rows as JsonBody[]).every((r) => r.tokenId === "2")).to.equal(true);
  });
});
