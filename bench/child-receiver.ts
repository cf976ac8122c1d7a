/**
 * A webhook receiver for the benches, in a process of its own as real ones are (one in the bench's
 * process would share its thread with PGlite and the writers, and on a 2-core machine its CPU is
 * taken from the service's): answers 200 at once and notes when each webhook-id came, nothing more.
 */
import { spawn } from "node:child_process";

/** GET /count answers how many came; GET / every [webhook-id, arrival ms]. */
const RECEIVER_SOURCE = `
const arrivals = [];
const server = require("node:http").createServer((req, res) => {
  if (req.method === "GET") return res.end(JSON.stringify(req.url === "/count" ? arrivals.length : arrivals));
  req.resume();
  req.on("end", () => { arrivals.push([req.headers["webhook-id"], Date.now()]); res.end(); });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => console.log(server.address().port));`;

export async function startChildReceiver(): Promise<{
  url: string;
  /** Its process id (a bench reads its CPU time). */
  pid: number | undefined;
  /** Every arrival, once `count` have come. */
  until(count: number): Promise<[string, number][]>;
  /** How many deliveries came so far. */
  count(): Promise<number>;
  close(): void;
}> {
  const child = spawn(process.execPath, ["-e", RECEIVER_SOURCE], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve) => child.stdout.once("data", (d) => resolve(Number(String(d)))));
  const url = `http://127.0.0.1:${port}/`;
  return {
    url,
    pid: child.pid,
    async until(count) {
      while (Number(await (await fetch(`${url}count`)).text()) < count)
        await new Promise((resolve) => setTimeout(resolve, 50));
      return (await (await fetch(url)).json()) as [string, number][];
    },
    count: async () => Number(await (await fetch(`${url}count`)).text()),
    close: () => child.kill(),
  };
}
