import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { expect } from "chai";
import { getAddress, hexlify } from "ethers";
import { ApiError } from "../../server/http/errors";
import { checkRows, csvFields, longestTopLevelArray, readCsvRows } from "../../server/jobs/rows";

const fresh = () => getAddress(hexlify(randomBytes(20)));
/** The address with the case of every letter swapped: a wrong checksum (unless it has no letter). */
const swapped = (address: string) =>
  `0x${[...address.slice(2)].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join("")}`;

function badRows(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    return ((err as ApiError).details ?? []).map((d) => d.path);
  }
  return [];
}

const csv = (text: string) => readCsvRows(Readable.from([Buffer.from(text.slice(0, 50)), Buffer.from(text.slice(50))]));

describe("a job's rows (server/jobs/rows.ts)", function () {
  it("takes checksummed, lower-case and upper-case addresses, and names a wrong checksum as ethers' getAddress does", function () {
    for (let i = 0; i < 200; i++) {
      const address = fresh();
      const upper = `0x${address.slice(2).toUpperCase()}`;
      const rows = [address, address.toLowerCase(), upper].map((a, n) => ({ line: n + 1, address: a, amount: "1" }));
      expect(badRows(() => checkRows("airdrop", rows))).to.deep.equal([]);
      if (/[a-fA-F]/.test(address.slice(2)) && swapped(address) !== upper && swapped(address) !== address.toLowerCase())
        expect(
          badRows(() => checkRows("airdrop", [{ line: 7, address: swapped(address), amount: "1" }])),
        ).to.deep.equal(["row 7"]);
    }
  });

  it("merges the same address: amounts added for an airdrop, one entry for a whitelist, at its first row", function () {
    const a = fresh();
    const b = fresh();
    const rows = [
      { line: 1, address: a, amount: "2" },
      { line: 2, address: b, amount: 1 },
      { line: 3, address: a.toLowerCase(), amount: "3" },
    ];
    expect(checkRows("airdrop", rows).map((e) => [e.line, e.amount])).to.deep.equal([
      [1, 5n],
      [2, 1n],
    ]);
    expect(checkRows("whitelist", rows)).to.have.length(2);
  });

  it("on an edition contract: merges per (edition, address), groups the entries by edition, and names rows without a tokenId", function () {
    const [a, b] = [fresh(), fresh()];
    const target = { standard: "erc1155" as const, contractAddress: fresh() };
    const rows = [
      { line: 1, address: a, amount: "1", tokenId: "2" },
      { line: 2, address: b, amount: "1", tokenId: 1 },
      { line: 3, address: a, amount: "2", tokenId: "1" },
      { line: 4, address: a.toLowerCase(), amount: "3", tokenId: "2" },
    ];
    expect(checkRows("airdrop", rows, undefined, target).map((e) => [e.line, e.tokenId, e.amount])).to.deep.equal([
      [1, 2n, 4n],
      [2, 1n, 1n],
      [3, 1n, 2n],
    ]);
    const bad = [undefined, "", "x", "-1", 1.5].map((tokenId, i) => ({
      line: i + 1,
      address: fresh(),
      amount: 1,
      tokenId,
    }));
    expect(badRows(() => checkRows("airdrop", bad, undefined, target))).to.deep.equal([
      "row 1",
      "row 2",
      "row 3",
      "row 4",
      "row 5",
    ]);
    // A whitelist takes no edition; an ERC-721 airdrop with one is refused as a whole, naming tokenId.
    expect(checkRows("whitelist", [{ line: 1, address: a }], undefined, target)).to.have.length(1);
    expect(
      badRows(() => checkRows("airdrop", rows, undefined, { standard: "erc721", contractAddress: fresh() })),
    ).to.deep.equal(["tokenId"]);
  });

  it("reads a CSV's columns in its header's order (address,amount,tokenId by default)", async function () {
    const a = fresh();
    const { rows } = await csv(`tokenId,Amount,address\n7,2,${a}\n`);
    expect(rows).to.deep.equal([{ line: 2, address: a, amount: "2", tokenId: "7" }]);
    const plain = await csv(`${a},2,7\n`);
    expect(plain.rows).to.deep.equal([{ line: 1, address: a, amount: "2", tokenId: "7" }]);
  });

  it("names amounts that are not whole numbers >= 1", function () {
    const rows = ["0", "-1", "1.5", "", "x", 2.5].map((amount, i) => ({ line: i + 1, address: fresh(), amount }));
    expect(badRows(() => checkRows("airdrop", rows))).to.deep.equal([
      "row 1",
      "row 2",
      "row 3",
      "row 4",
      "row 5",
      "row 6",
    ]);
  });

  for (const broken of [`"ADDRESS"x,1`, `ADDRESS,"5`, `0x12"34${"5".repeat(36)},1`, `"ADDRESS,1`]) {
    it(`reads on past a broken quote (${broken}), naming its row and keeping the others`, async function () {
      const text = `address,amount\n${fresh()},1\n${broken.replace("ADDRESS", fresh())}\n${fresh()},2\n\n${fresh()},3\n`;
      const { rows, problems } = await csv(text);
      expect(rows.map((r) => r.line)).to.deep.equal([2, 4, 6]);
      expect(problems.named.map((p) => p.path)).to.deep.equal(["row 3"]);
    });
  }

  it("reads a line's fields as RFC 4180 does within the line, and says why a line is no CSV", function () {
    expect(csvFields(" 0xab , 2 ")).to.deep.equal(["0xab", "2"]);
    expect(csvFields(`"0xab", "2"`)).to.deep.equal(["0xab", "2"]);
    expect(csvFields(`"a ""b"", c",1`)).to.deep.equal([`a "b", c`, "1"]);
    expect(csvFields(`"0xab"x,1`)).to.equal("text after the closing quote of field 1");
    expect(csvFields(`0xab,"1`)).to.equal("a quote opened in field 2 is not closed on its line");
    expect(csvFields(`0x"ab,1`)).to.equal("a quote inside the unquoted field 1");
  });

  it("takes a first row of column names alone for the header, and any other first row for data", async function () {
    const a = fresh();
    for (const [text, lines] of [
      [`address,amount\n${a},1\n`, [2]],
      [`\uFEFF"Address" , AMOUNT\r\n${a},1\r\n`, [2]],
      [`wallet,qty\n${a},1\n`, [1, 2]],
      [`${a.slice(2)},1\n${a},1\n`, [1, 2]],
      [`${a},1\n`, [1]],
    ] as const) {
      const { rows } = await csv(text);
      expect(
        rows.map((r) => r.line),
        text,
      ).to.deep.equal(lines);
    }
  });

  it("counts the items of a JSON body's longest top-level array without parsing it", function () {
    const cases: [unknown, number][] = [
      [{ kind: "airdrop", recipients: [] }, 0],
      [{ recipients: [{ address: "a,b", amount: [1, 2, 3] }, { address: "]" }] }, 2],
      [{ a: [1, 2, 3], b: ["x"], c: { d: [1, 2, 3, 4, 5] } }, 3],
      [{ addresses: ['"', "\\", ","] }, 3],
    ];
    for (const [body, n] of cases) expect(longestTopLevelArray(JSON.stringify(body)), JSON.stringify(body)).to.equal(n);
  });
});
