import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { clientTypes } from "../../scripts/client-types";

describe("the nft-ops CLI's generated client types (server/client/api-types.ts)", function () {
  it("are what npm run generate:client-types writes from the current OpenAPI document", async function () {
    this.timeout(60_000);
    const committed = readFileSync(path.join(__dirname, "..", "..", "server", "client", "api-types.ts"), "utf8");
    expect(committed === (await clientTypes()), "run npm run generate:client-types").to.equal(true);
  });
});
