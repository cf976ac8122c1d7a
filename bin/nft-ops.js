#!/usr/bin/env node
// The package's CLI (`npx nft-ops job airdrop FILE.csv --collection 0x… --from treasury`,
// `npx nft-ops edition create …`): the built output when there is one (npm run build), else the
// TypeScript source through ts-node.
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS shim, run by node as it is */
"use strict";
const { existsSync } = require("node:fs");
const path = require("node:path");

const built = path.join(__dirname, "..", "dist", "server", "client", "nft-ops.js");
let cli;
if (existsSync(built)) {
  cli = require(built);
} else {
  require("ts-node/register/transpile-only");
  cli = require(path.join(__dirname, "..", "server", "client", "nft-ops.ts"));
}
cli.main(process.argv.slice(2), process.env).then(
  (code) => (process.exitCode = code),
  (err) => {
    console.error(`nft-ops: ${err && err.message ? err.message : err}`);
    process.exitCode = 1;
  },
);
