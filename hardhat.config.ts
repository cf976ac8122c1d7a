import { HardhatUserConfig, subtask } from "hardhat/config";
import { TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD, TASK_TEST_GET_TEST_FILES } from "hardhat/builtin-tasks/task-names";
import path from "node:path";
// The plugins this project uses, not the whole toolbox: ethers on hre (scripts, contract tests),
// chai's contract matchers, and typed contracts (typechain-types, for server/chain/collection-abi.ts).
import "@nomicfoundation/hardhat-chai-matchers";
import "@nomicfoundation/hardhat-ethers";
import "@typechain/hardhat";
import solcPackage from "solc/package.json";

// The compiler comes from the pinned npm package `solc` (solc-js), so compiling needs no download.
const SOLC_VERSION = solcPackage.version;

subtask(TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD, async (args: { solcVersion: string }, _hre, runSuper) => {
  if (args.solcVersion !== SOLC_VERSION) return runSuper();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const solc = require("solc") as { version(): string };
  return {
    compilerPath: require.resolve("solc/soljson.js"),
    isSolcJs: true,
    version: SOLC_VERSION,
    longVersion: solc.version().replace(/\.Emscripten\.clang$/, ""),
  };
});

// The benches' smoke runs start with the test run and go on beside it (test/bench-smoke.test.ts): their
// file runs last, so that it waits only for what is left of them.
subtask(TASK_TEST_GET_TEST_FILES, async (args: { testFiles: string[] }, _hre, runSuper) => {
  const files = (await runSuper(args)) as string[];
  const last = (file: string) => path.basename(file) === "bench-smoke.test.ts";
  return [...files.filter((file) => !last(file)), ...files.filter(last)];
});

// Networks other than the built-in ones are configured from the environment so that moving
// to a public chain is a matter of setting RPC_URL (and DEPLOYER_PRIVATE_KEY).
const remote = process.env.RPC_URL
  ? {
      remote: {
        url: process.env.RPC_URL,
        accounts: process.env.DEPLOYER_PRIVATE_KEY ? [process.env.DEPLOYER_PRIVATE_KEY] : [],
      },
    }
  : {};

const config: HardhatUserConfig = {
  solidity: {
    version: SOLC_VERSION,
    settings: {
      evmVersion: "cancun",
      optimizer: { enabled: true, runs: 1000 },
    },
  },
  networks: {
    // HARDHAT_CHAIN_ID: `hardhat node` has no chain-id flag; the tests run two chains with two ids.
    hardhat: {
      hardfork: "cancun",
      ...(process.env.HARDHAT_CHAIN_ID ? { chainId: Number(process.env.HARDHAT_CHAIN_ID) } : {}),
    },
    localhost: { url: process.env.LOCALHOST_RPC_URL ?? "http://127.0.0.1:8545" },
    ...remote,
  },
  // forbidOnly: an it.only or describe.only left in a test file fails the run instead of silently
  // running that test alone (ESLint's no-restricted-properties says so before, in npm run lint).
  // TEST_FILE_SECONDS=<file>: the spec output, and how long each test file took, written there as JSON
  // (what scripts/test-parts.ts deals the files by: test/file-seconds.json).
  mocha: {
    timeout: 120_000,
    forbidOnly: true,
    ...(process.env.TEST_FILE_SECONDS
      ? { reporter: path.join(__dirname, "test", "support", "file-seconds-reporter.ts") }
      : {}),
  },
};

export default config;
