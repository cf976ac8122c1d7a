import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import Router from "@koa/router";
import type { Context } from "koa";
import { SCOPES } from "../access/scopes";

/**
 * GET /console: the operators' page (console/ in the project, plain files: no build step), and the
 * libraries it loads, straight from node_modules: preact and htm (ES modules without imports of
 * their own), uPlot (its browser bundle). Nothing from a CDN; it works offline.
 */
const CONSOLE_DIR = [
  path.resolve(__dirname, "..", "..", "console"),
  path.resolve(__dirname, "..", "..", "..", "console"),
].find((dir) => existsSync(path.join(dir, "index.html")));

const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

/** What the page may load: its own files and the API, nothing inline, never in a frame. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The console's views, one module each: console/NAME.mjs. */
const VIEWS = ["operations", "approvals", "wallets", "access-keys", "audit-events", "webhooks", "collections", "jobs"];

/** A file of the project or of node_modules, read on first request. */
const file = (where: () => string) => () => readFileSync(where());

const ASSETS: Record<string, { read: () => Buffer; type: string }> = {
  // The scopes a key can have, as the page imports them: the one list, server/access/scopes.ts.
  "scopes.mjs": { read: () => Buffer.from(`export const SCOPES = ${JSON.stringify(SCOPES)};\n`), type: JS },
  "app.js": { read: file(() => path.join(CONSOLE_DIR ?? "", "app.js")), type: JS },
  // The modules app.js imports: what the views share, and each view.
  "shared.mjs": { read: file(() => path.join(CONSOLE_DIR ?? "", "shared.mjs")), type: JS },
  ...Object.fromEntries(
    VIEWS.map((name) => [`${name}.mjs`, { read: file(() => path.join(CONSOLE_DIR ?? "", `${name}.mjs`)), type: JS }]),
  ),
  "app.css": { read: file(() => path.join(CONSOLE_DIR ?? "", "app.css")), type: CSS },
  // Declared in the page, so that a browser does not ask for /favicon.ico (a 404 in its log).
  "icon.svg": { read: file(() => path.join(CONSOLE_DIR ?? "", "icon.svg")), type: "image/svg+xml" },
  "vendor/preact.mjs": { read: file(() => require.resolve("preact")), type: JS },
  "vendor/htm.mjs": { read: file(() => path.join(path.dirname(require.resolve("htm")), "htm.mjs")), type: JS },
  "vendor/uPlot.iife.min.js": {
    read: file(() => path.join(path.dirname(require.resolve("uplot")), "uPlot.iife.min.js")),
    type: JS,
  },
  "vendor/uPlot.min.css": {
    read: file(() => path.join(path.dirname(require.resolve("uplot")), "uPlot.min.css")),
    type: CSS,
  },
};

/** Each body made once, on first request. */
const cache = new Map<string, Buffer>();

function serve(ctx: Context, name: string, type: string, read: () => Buffer): void {
  let body = cache.get(name);
  if (!body) {
    body = read();
    cache.set(name, body);
  }
  ctx.set("Content-Security-Policy", CONSOLE_CSP);
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("X-Frame-Options", "DENY");
  ctx.set("Referrer-Policy", "no-referrer");
  ctx.set("Cache-Control", "no-cache");
  ctx.type = type;
  ctx.body = body;
}

export function createConsoleRouter(): Router {
  const router = new Router();
  if (!CONSOLE_DIR) return router; // a build without the page's files: /console is 404
  router.get("/console", (ctx) =>
    serve(
      ctx,
      "index.html",
      "text/html; charset=utf-8",
      file(() => path.join(CONSOLE_DIR, "index.html")),
    ),
  );
  const asset = (ctx: Context, name: string) => {
    const found = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (found) serve(ctx, name, found.type, found.read); // else it falls through to 404
  };
  router.get("/console/:file", (ctx) => asset(ctx, ctx.params.file));
  router.get("/console/vendor/:file", (ctx) => asset(ctx, `vendor/${ctx.params.file}`));
  return router;
}
