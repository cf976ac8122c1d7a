/**
 * Migration 29: which door an operation came in by. `via` is "mcp" for a write an MCP tool made
 * (server/mcp), NULL for a plain HTTP request: GET /nft/operations shows it, so a team can tell
 * what an agent did from what its own clients did.
 */
export const OPERATION_VIA_MIGRATION = {
  version: 29,
  name: "operations: via",
  sql: `ALTER TABLE operations ADD COLUMN via text;`,
};
