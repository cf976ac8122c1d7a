import eslint from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      "artifacts/",
      "cache/",
      "typechain-types/",
      "dist/",
      ".data/",
      ".cache/",
      "test/api/typed-client/generated/",
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.mocha } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // chai's property assertions (expect(x).to.be.true) are expressions by design
      "@typescript-eslint/no-unused-expressions": "off",
      // An exclusive test left behind runs alone and the rest pass unrun (mocha's forbidOnly, in
      // hardhat.config.ts, fails such a run too).
      "no-restricted-properties": [
        "error",
        ...["describe", "context", "it", "specify"].map((object) => ({
          object,
          property: "only",
          message: "An exclusive test: remove .only before committing.",
        })),
      ],
    },
  },
  {
    // The console's page: plain browser modules, served as they are (no build step).
    files: ["console/**/*.js", "console/**/*.mjs"],
    languageOptions: { globals: { ...globals.browser }, sourceType: "module" },
  },
);
