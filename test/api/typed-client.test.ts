/**
 * A client generated from the served /openapi.json drives every /nft operation: openapi-typescript
 * turns the document into TypeScript types, tsc checks typed-client/client.ts against them, and
 * the program (openapi-fetch) then runs against the service.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import openapiTS, { astToString } from "openapi-typescript";
import { ROOT, TEST_API_KEY, freshWallet, fundedWallet } from "./harness";
import { sharedService, type SharedService } from "./shared-service";
import type { TypedCall, TypedClientProgram } from "./typed-client/run";

const PROGRAM_DIR = path.join(__dirname, "typed-client");
const TSC = path.join(ROOT, "node_modules", ".bin", "tsc");

/** Runs tsc on the program's own tsconfig; resolves with its exit code and output. */
function typeCheck(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(TSC, ["--noEmit", "-p", path.join(PROGRAM_DIR, "tsconfig.json")], { cwd: ROOT });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, output }));
  });
}

describe("a typed client generated from /openapi.json (openapi-typescript + openapi-fetch)", function () {
  let shared: SharedService;
  let types: string;

  before(async function () {
    this.timeout(150_000);
    shared = await sharedService();
    const res = await fetch(`${shared.service.url}/openapi.json`);
    expect(res.status).to.equal(200);
    // defaultNonNullable: false, or openapi-typescript 7 makes request fields with a default required
    // (openapi-ts/openapi-typescript#2012): deploy's fields are optional, with documented defaults.
    const document = (await res.json()) as Parameters<typeof openapiTS>[0];
    types = astToString(await openapiTS(document, { defaultNonNullable: false }));
    mkdirSync(path.join(PROGRAM_DIR, "generated"), { recursive: true });
    // A .ts file, not .d.ts: mocha loads every .ts under test/, and a declaration file cannot be transpiled.
    writeFileSync(path.join(PROGRAM_DIR, "generated", "nft-api.ts"), types);
  });

  it("the generated types name every /nft operation by its operationId", function () {
    for (const id of [
      "tokenURI",
      "mint",
      "mintForFree",
      "addUserAddressToWhitelist",
      "setPaused",
      "setCost",
      "totalSupply",
      "withdraw",
      "deploy",
      "getOperation",
      "createEdition",
    ]) {
      expect(types, id).to.match(new RegExp(`^\\s+${id}: \\{`, "m"));
    }
  });

  it("the client program type-checks against them (tsc --noEmit), refusals included", async function () {
    this.timeout(120_000);
    const { code, output } = await typeCheck();
    expect(output.trim(), "tsc output").to.equal("");
    expect(code).to.equal(0);
  });

  it("the program calls every /nft operation with typed bodies and gets the documented success statuses", async function () {
    this.timeout(120_000);
    const owner = await fundedWallet(shared.provider);
    // A computed path: the main type check must not follow it into the generated types.
    const programPath = path.join(PROGRAM_DIR, "client");
    const program = (await import(programPath)) as TypedClientProgram;
    const calls = await program.driveEveryNftOperation({
      baseUrl: shared.service.url,
      privateKey: owner.privateKey,
      receiver: freshWallet().address,
      apiKey: TEST_API_KEY,
    });
    const answered = calls.map(({ operation, status }: TypedCall) => `${operation} ${status}`);
    expect(answered, JSON.stringify(calls, null, 1)).to.deep.equal([
      "deploy 201",
      "mint 200",
      "mintForFree 200",
      "addUserAddressToWhitelist 200",
      "setPaused 200",
      "setPaused 200",
      "setCost 200",
      "tokenURI 200",
      "totalSupply 200",
      "withdraw 200",
      "getOperation 200",
    ]);
    const byName = new Map(calls.map((call) => [call.operation, call.body as Record<string, unknown>]));
    expect(byName.get("mint")).to.include({ status: "confirmed", value: "2000" });
    expect(byName.get("tokenURI"))
      .to.have.property("tokenURI")
      .that.matches(/1\.json$/);
    expect(byName.get("withdraw")).to.include({ amount: "2000", to: owner.address });
    expect(byName.get("getOperation")).to.include({ operation: "mint", status: "confirmed" });
  });

  it("the program runs an ERC-1155 edition contract: deploy erc1155, createEdition, then each operation with its tokenId", async function () {
    this.timeout(120_000);
    const owner = await fundedWallet(shared.provider);
    const programPath = path.join(PROGRAM_DIR, "client");
    const program = (await import(programPath)) as TypedClientProgram;
    const receiver = freshWallet().address;
    const calls = await program.driveEditions({
      baseUrl: shared.service.url,
      privateKey: owner.privateKey,
      receiver,
      apiKey: TEST_API_KEY,
    });
    const answered = calls.map(({ operation, status }: TypedCall) => `${operation} ${status}`);
    expect(answered, JSON.stringify(calls, null, 1)).to.deep.equal([
      "deploy 201",
      "createEdition 200",
      "mint 200",
      "mintForFree 200",
      "airdrop 200",
      "setCost 200",
      "setPaused 200",
      "setPaused 200",
      "tokenURI 200",
      "totalSupply 200",
    ]);
    const byName = new Map(calls.map((call) => [call.operation, call.body as Record<string, unknown>]));
    expect(byName.get("deploy")).to.include({ standard: "erc1155" });
    expect(byName.get("createEdition")).to.include({ status: "confirmed", tokenId: "1" });
    expect(byName.get("mint")).to.include({ status: "confirmed", tokenId: "1", amount: "2", value: "2000" });
    expect(byName.get("mintForFree")).to.include({ tokenId: "1", amount: "1" });
    expect(byName.get("tokenURI")).to.have.property("tokenURI").that.equals("ipfs://typed/1.json");
    // 2 minted, 1 free, 2 airdropped; the caller holds the 2 it paid for.
    expect(byName.get("totalSupply")).to.deep.include({
      tokenId: "1",
      totalSupply: "5",
      maxSupply: "50",
      wallet: { address: owner.address, balances: { "1": "2" } },
    });
  });
});
