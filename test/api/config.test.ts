import { spawnSync } from "node:child_process";
import { expect } from "chai";
import { loadConfig } from "../../server/config/config";
import { npmStartCommand, ROOT } from "./harness";

describe("configuration", function () {
  it("has the defaults of API.md when nothing is set", function () {
    const config = loadConfig({});
    expect(config).to.include({
      port: 3000,
      host: "127.0.0.1",
      chainPort: 8545,
      txTimeoutMs: 60_000,
      confirmations: 1,
      txResendBlocks: 3,
      trustProxy: false,
      shutdownTimeoutMs: 10_000,
      logFormat: "auto",
    });
    expect(config.rpcUrl).to.equal(undefined);
    expect(config.maxFeePerGas).to.equal(undefined);
    expect(config.logLevel).to.equal("info");
  });

  for (const [name, value] of [
    ["PORT", "abc"],
    ["PORT", "70000"],
    ["RPC_URL", "not a url"],
    ["CONTRACT_ADDRESS", "0x1234"],
    ["DATABASE_URL", "mysql://x"],
    ["CONFIRMATIONS", "0"],
    ["LOG_LEVEL", "loud"],
    ["TX_RESEND_BLOCKS", "0"],
    ["MAX_FEE_PER_GAS", "1.5gwei"],
    ["TRUST_PROXY", "yes"],
    ["SHUTDOWN_TIMEOUT_MS", "-1"],
    ["SHUTDOWN_TIMEOUT_MS", "10s"],
    ["REQUEST_TIMEOUT_MS", "2m"],
    ["HEADERS_TIMEOUT_MS", "0"],
    ["LOG_FORMAT", "xml"],
  ] as const) {
    it(`refuses ${name}=${value} with a message naming ${name}`, function () {
      expect(() => loadConfig({ [name]: value })).to.throw(new RegExp(`^Invalid configuration: ${name} `));
    });
  }

  it("reads MAX_FEE_PER_GAS as wei and TRUST_PROXY as a boolean", function () {
    const config = loadConfig({ MAX_FEE_PER_GAS: "50000000000", TRUST_PROXY: "true" });
    expect(config.maxFeePerGas).to.equal(50_000_000_000n);
    expect(config.trustProxy).to.equal(true);
  });

  it("requires API_KEY when RPC_URL is set", function () {
    expect(() => loadConfig({ RPC_URL: "http://127.0.0.1:8545" })).to.throw(/API_KEY is required when RPC_URL is set/);
  });

  it("npm start with a bad value stops at once with one line naming the variable", function () {
    this.timeout(60_000);
    const [node, ...args] = npmStartCommand();
    const result = spawnSync(node, args, {
      cwd: ROOT,
      env: { ...process.env, PORT: "not-a-port", RPC_URL: "", API_KEY: "" },
      encoding: "utf8",
    });
    expect(result.status).to.equal(1);
    const lines = result.stderr
      .trim()
      .split("\n")
      .filter((line) => !/npm warn/i.test(line));
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/^Invalid configuration: PORT /);
  });
});
