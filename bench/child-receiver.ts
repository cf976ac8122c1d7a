/**
 * A webhook receiver for the benches, in a process of its own as real ones are (one in the bench's
 * process would share its thread with PGlite and the writers, and on a 2-core machine its CPU is
 * taken from the service's): answers 200 at once and notes when each webhook-id came, nothing more.
 */
import { spawn } from "node:child_process";

/**
 * GET /count answers how many came; GET / every [webhook-id, arrival ms]. HTTP/1.1 read off the
 * socket by hand (keep-alive and pipelining, Content-Length bodies: what undici sends), not
 * node:http: its parser and objects took about 0.12 ms of CPU per delivery, on the same two cores
 * as the service it measures. Every delivery is answered 200 with no body.
 */
const RECEIVER_SOURCE = `
const arrivals = [];
const OK = Buffer.from("HTTP/1.1 200 OK\\r\\ncontent-length: 0\\r\\n\\r\\n");
const server = require("node:net").createServer((socket) => {
  let buffer = Buffer.alloc(0);
  socket.on("data", (chunk) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    for (;;) {
      const end = buffer.indexOf("\\r\\n\\r\\n");
      if (end < 0) return;
      const head = buffer.toString("latin1", 0, end);
      const length = Number(/\\r\\ncontent-length: *(\\d+)/i.exec(head)?.[1] ?? 0);
      if (buffer.length < end + 4 + length) return;
      buffer = buffer.subarray(end + 4 + length);
      if (head.startsWith("GET")) {
        const body = JSON.stringify(head.startsWith("GET /count") ? arrivals.length : arrivals);
        socket.write("HTTP/1.1 200 OK\\r\\ncontent-type: application/json\\r\\ncontent-length: " + Buffer.byteLength(body) + "\\r\\n\\r\\n" + body);
      } else {
        arrivals.push([/\\r\\nwebhook-id: *([^\\r]*)/i.exec(head)?.[1], Date.now()]);
        socket.write(OK);
      }
    }
  });
  socket.on("error", () => {});
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));`;

export async function startChildReceiver(): Promise<{
  url: string;
  /** Its process id (a bench reads its CPU time). */
  pid: number | undefined;
  /** Every arrival, once `count` have come; throws with the count reached after `timeoutMs` (default 2 minutes). */
  until(count: number, timeoutMs?: number): Promise<[string, number][]>;
  /** How many deliveries came so far. */
  count(): Promise<number>;
  close(): void;
}> {
  const child = spawn(process.execPath, ["-e", RECEIVER_SOURCE], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve) => child.stdout.once("data", (d) => resolve(Number(String(d)))));
  const url = `http://127.0.0.1:${port}/`;
  const counted = async () => Number(await (await fetch(`${url}count`)).text());
  return {
    url,
    pid: child.pid,
    async until(count, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (let came = await counted(); came < count; came = await counted()) {
        if (Date.now() > deadline)
          throw new Error(`the receiver had ${came} of ${count} deliveries after ${timeoutMs / 1000} s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return (await (await fetch(url)).json()) as [string, number][];
    },
    count: counted,
    close: () => child.kill(),
  };
}
