/**
 * The import graph's rules (docs/architecture.md draws the same layers), checked by `npm run lint:deps`.
 * server/ folders, lowest first:
 *   base      config db http metrics signers chain runtime embedded: no HTTP feature, no chain unit
 *   core      access engine chains: keys, the transaction engine, the registry a route asks its chain of
 *   features  approvals collections drops jobs metadata nft users wallets webhooks console: routes and what they run
 *   over      mcp openapi: read every feature's route registrations
 *   root      app (the composition root), client (the nft-ops CLI), cli.ts: the entries
 * A folder imports its own layer or lower ones; type-only imports count (tsPreCompilationDeps).
 */
const BASE = "^server/(config|db|http|metrics|signers|chain|runtime|embedded)/";
const CORE = "^server/(access|engine|chains)/";
const FEATURES = "^server/(approvals|collections|drops|jobs|metadata|nft|users|wallets|webhooks|console)/";
const OVER = "^server/(mcp|openapi)/";
const ROOT = "^server/(app/|client/|cli\\.ts$)";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment:
        "No file reaches itself through its imports: a circle makes load order matter and ties its files into one. " +
        "Break it by moving the shared type to the folder that owns it, or by passing a function in.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "base-imports-no-layer-above",
      comment:
        "Base folders (config, db, http, metrics, signers, chain, runtime, embedded) import only base folders: " +
        "a shared field, a store or a chain client must not depend on the routes that use it.",
      severity: "error",
      from: { path: BASE },
      to: { path: `${CORE}|${FEATURES}|${OVER}|${ROOT}` },
    },
    {
      name: "core-imports-no-feature",
      comment:
        "access, engine and chains serve every feature: they declare what they need (a kind, a RegisteredChain) " +
        "and the features plug in, never the other way round.",
      severity: "error",
      from: { path: CORE },
      to: { path: `${FEATURES}|${OVER}|${ROOT}` },
    },
    {
      name: "features-import-no-mcp-or-openapi",
      comment: "mcp and openapi read every feature's routes; a feature that imported them would close a circle.",
      severity: "error",
      from: { path: FEATURES },
      to: { path: OVER },
    },
    {
      name: "nothing-imports-the-composition-root",
      comment:
        "server/app assembles every feature (the chain unit, the service's apps, startService, runService); " +
        "only the entries (cli.ts, scripts/, tests) import it. A feature declares the interface it needs next to its routes instead.",
      severity: "error",
      from: { path: `${BASE}|${CORE}|${FEATURES}|${OVER}` },
      to: { path: ROOT },
    },
    {
      name: "server-imports-no-tests-or-tools",
      comment: "The service runs without test/, bench/ and scripts/ (the production build has only server/).",
      severity: "error",
      from: { path: "^server/" },
      to: { path: "^(test|bench|scripts)/" },
    },
    {
      name: "every-server-file-has-a-layer",
      comment: "A new folder under server/ gets a layer here (and in docs/architecture.md) before it is used.",
      severity: "error",
      from: { path: "^server/", pathNot: `${BASE}|${CORE}|${FEATURES}|${OVER}|${ROOT}` },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
