/**
 * `npm run docs:openapi`: writes docs/openapi.json, the OpenAPI 3.1 document GET /openapi.json
 * serves (the API listener's, demo users included), from the same code, with no chain or store.
 * test/api/service.test.ts fails when the committed file is not what a running service serves.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { openApiDocuments } from "../server/openapi/documents";

/** The text of docs/openapi.json: the document as JSON, two-space indented, ending with a newline. */
export function openApiText(): string {
  return `${JSON.stringify(openApiDocuments(false).api(), null, 2)}\n`;
}

export const OPENAPI_FILE = path.join(__dirname, "..", "docs", "openapi.json");

if (require.main === module) {
  writeFileSync(OPENAPI_FILE, openApiText());
  console.log(`wrote ${path.relative(process.cwd(), OPENAPI_FILE)}`);
}
