import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { ConfigError, loadConfig } from "../../server/config/config";

const KEY = { API_KEY: "a-key-of-at-least-16-characters" };
const chains = (value: unknown) => ({ ...KEY, CHAINS: JSON.stringify(value) });
const refused = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("the configuration was accepted");
};

describe("CHAINS configuration", function () {
  it("takes a JSON array inline, each chain's settings defaulting to the one-chain ones", function () {
    const config = loadConfig({
      ...chains([
        { id: 8453, name: "base", rpcUrls: ["https://a.example/k", "https://b.example"], confirmations: 2 },
        { id: "137", rpcUrls: ["https://c.example"], maxFeePerGas: "1000" },
      ]),
      CONFIRMATIONS: "3",
    });
    expect(config.chains!.map((c) => [c.id, c.name, c.rpcUrls.length, c.confirmations, c.maxFeePerGas])).to.deep.equal([
      [8453n, "base", 2, 2, undefined],
      [137n, "chain-137", 1, 3, 1000n],
    ]);
  });

  it("takes @file", function () {
    const dir = mkdtempSync(path.join(tmpdir(), "chains-config-"));
    try {
      const file = path.join(dir, "chains.json");
      writeFileSync(file, JSON.stringify([{ id: 10, name: "op", rpcUrls: ["https://op.example"] }]));
      expect(loadConfig({ ...KEY, CHAINS: `@${file}` }).chains![0].name).to.equal("op");
      expect(refused({ ...KEY, CHAINS: `@${path.join(dir, "none.json")}` })).to.match(
        /^Invalid configuration: CHAINS cannot read/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("stops the start with one line naming the chain and the field", function () {
    const lines = [
      refused(chains([{ id: 8453, name: "base", rpcUrls: ["ftp://x"] }])),
      refused(chains([{ id: 8453, name: "Base!", rpcUrls: ["https://a.example"] }])),
      refused(chains([{ name: "base", rpcUrls: ["https://a.example"] }])),
      refused(chains([{ id: 1, name: "base", rpcUrls: [] }])),
      refused(
        chains([
          { id: 1, name: "a", rpcUrls: ["https://a.example"] },
          { id: 1, name: "b", rpcUrls: ["https://b.example"] },
        ]),
      ),
      refused({ ...KEY, CHAINS: "not json" }),
      refused({ CHAINS: JSON.stringify([{ id: 1, rpcUrls: ["https://a.example"] }]) }),
    ];
    for (const line of lines) expect(line.split("\n")).to.have.length(1);
    expect(lines[0]).to.match(/^Invalid configuration: CHAINS chain base: rpcUrls /);
    expect(lines[1]).to.match(/^Invalid configuration: CHAINS chain Base!: name /);
    expect(lines[2]).to.match(/^Invalid configuration: CHAINS chain base: id /);
    expect(lines[3]).to.match(/^Invalid configuration: CHAINS chain base: rpcUrls must list at least one URL/);
    expect(lines[4]).to.match(/^Invalid configuration: CHAINS chain b: id 1 is used twice/);
    expect(lines[5]).to.equal(
      "Invalid configuration: CHAINS must be a JSON array (inline, or @file): not valid JSON at character 1",
    );
    expect(lines[6]).to.match(/^Invalid configuration: API_KEY is required when CHAINS is set/);
  });

  it("a CHAINS value that is not JSON says where parsing failed, without quoting it; a file's name without @ is pointed to @file", function () {
    const inline = refused({ ...KEY, CHAINS: '[{"id":1,"rpcUrls":["https://a.example/secret-key-0123456789"],}]' });
    expect(inline).to.equal(
      "Invalid configuration: CHAINS must be a JSON array (inline, or @file): not valid JSON at character 64",
    );
    expect(inline).to.not.include("secret-key");
    expect(refused({ ...KEY, CHAINS: "chains.json" })).to.equal(
      "Invalid configuration: CHAINS is not JSON: to read the file chains.json, write CHAINS=@chains.json",
    );
    const dir = mkdtempSync(path.join(tmpdir(), "chains-config-"));
    try {
      const file = path.join(dir, "chains.json");
      writeFileSync(file, '[\n  {"id": 10, "rpcUrls": ["https://op.example"]}\n  {"id": 11}\n]\n');
      expect(refused({ ...KEY, CHAINS: `@${file}` })).to.equal(
        `Invalid configuration: CHAINS must be a JSON array (inline, or @file): not valid JSON in ${file} at line 3, column 3`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("RPC_URL may list several URLs; neither CHAINS nor RPC_URL is the embedded chain", function () {
    const config = loadConfig({ ...KEY, RPC_URL: "http://127.0.0.1:8545, http://127.0.0.1:8546" });
    expect(config.rpcUrls).to.deep.equal(["http://127.0.0.1:8545", "http://127.0.0.1:8546"]);
    const embedded = loadConfig({});
    expect(embedded.chains).to.equal(undefined);
    expect(embedded.rpcUrls).to.deep.equal([]);
  });
});
