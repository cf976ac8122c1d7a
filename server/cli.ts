/**
 * The production entry: `npm run build`, then `node dist/server/cli.js` with RPC_URL (and
 * API_KEY) set. Production dependencies only: no Hardhat, no TypeScript, no `artifacts/` (the
 * collection's ABI and bytecode are built into dist/). `npm start` is the development entry.
 */
import { loadConfigOrExit, runService, serviceLogger } from "./app/run";

const config = loadConfigOrExit();
if (!config.rpcUrl && !config.chains) {
  console.error(
    "Invalid configuration: RPC_URL or CHAINS is required by the production entry (npm start runs the embedded dev chain)",
  );
  process.exit(1);
}
void runService(config, serviceLogger(config));
