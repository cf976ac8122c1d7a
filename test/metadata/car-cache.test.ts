/**
 * The CAR cache on its own (server/metadata/car-cache.ts), with the real importer and CAR writer:
 * one build at a time, requests for it joining it, others refused with 429 and Retry-After, and a
 * built CAR kept by its root CID.
 */
import { expect } from "chai";
import { ApiError } from "../../server/http/errors";
import { CarCache } from "../../server/metadata/car-cache";

const document = (n: number) => Buffer.from(JSON.stringify({ name: `Token #${n}`, description: "x".repeat(500) }));
const files = (count: number) => async () => ({ count, document });

describe("CarCache: one CAR built at a time, kept by root CID", function () {
  it("joins a request for the CAR being built, refuses another collection's with 429, and keeps the result", async function () {
    this.timeout(120_000);
    const cars = new CarCache();
    const first = cars.build("31337:0xa", files(2_000));
    const joined = cars.build("31337:0xa", files(2_000));
    let refused: unknown;
    try {
      await cars.build("31337:0xb", files(3));
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(ApiError);
    expect((refused as ApiError).code).to.equal("RATE_LIMITED");
    expect(Number((refused as ApiError).headers?.["Retry-After"])).to.be.above(0);
    const [a, b] = await Promise.all([first, joined]);
    expect(b).to.equal(a);
    expect(a.root).to.match(/^baf/);
    expect(cars.find(a.root)?.equals(a.bytes)).to.equal(true);
    // The build over, another collection's is built.
    const other = await cars.build("31337:0xb", files(3));
    expect(other.root).to.not.equal(a.root);
    expect(cars.find(other.root)?.equals(other.bytes)).to.equal(true);
  });
});
