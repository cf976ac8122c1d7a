/**
 * A static file server for the benches' baselines, in a process of its own as the service is: one in
 * the load generator's process would share its thread with autocannon, and the ratio would compare
 * a server with a thread of its own against one without (issue 54, item 5).
 */
import { spawn } from "node:child_process";

/** node:http reading each file per request, as serve-static does; JSON files only, with the service's headers. */
const SERVER_SOURCE = `
const { createServer } = require("node:http");
const { readFile } = require("node:fs");
const path = require("node:path");
const dir = process.argv[1];
const headers = { "content-type": "application/json; charset=utf-8", "cache-control": "public, max-age=60" };
const server = createServer((req, res) => {
  readFile(path.join(dir, path.basename(req.url || "")), (err, body) => {
    if (err) return void res.writeHead(404).end();
    res.writeHead(200, headers).end(body);
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));`;

/** Serves the files of `dir` by their base name on a loopback port, from a child process. */
export async function startChildStaticServer(
  dir: string,
): Promise<{ url: string; pid: number | undefined; close(): void }> {
  const child = spawn(process.execPath, ["-e", SERVER_SOURCE, dir], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once("data", (d) => resolve(Number(String(d))));
    child.once("exit", (code) => reject(new Error(`the static server exited with ${code} before it listened`)));
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, close: () => child.kill() };
}
