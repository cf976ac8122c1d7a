/** DrainableServer: what closing a real HTTP server does to each kind of connection it holds. */
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { expect } from "chai";
import { DrainableServer } from "../../server/runtime/shutdown";

/** A server whose requests take `?ms=` milliseconds to answer. */
async function slowServer(): Promise<{ server: Server; drainable: DrainableServer; port: number }> {
  const server = createServer((req, res) => {
    const ms = Number(new URL(req.url ?? "/", "http://x").searchParams.get("ms") ?? 0);
    setTimeout(() => res.end("done"), ms);
  });
  const drainable = new DrainableServer(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, drainable, port: (server.address() as AddressInfo).port };
}

/** A raw connection that sends `text` and collects what comes back until the server closes it. */
function rawConnection(port: number, text: string): { socket: Socket; ended: Promise<string> } {
  const socket = connect({ host: "127.0.0.1", port });
  socket.write(text);
  let received = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => (received += chunk));
  const ended = new Promise<string>((resolve) => socket.once("close", () => resolve(received)));
  socket.on("error", () => undefined);
  return { socket, ended };
}

const timed = async <T>(run: () => Promise<T>) => {
  const started = Date.now();
  const value = await run();
  return { value, ms: Date.now() - started };
};

describe("closing a DrainableServer", function () {
  it("answers a request in flight (with Connection: close), then closes, before the bound", async function () {
    const { drainable, port } = await slowServer();
    const { ended } = rawConnection(port, "GET /?ms=300 HTTP/1.1\r\nHost: x\r\n\r\n");
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { value, ms } = await timed(() => drainable.close(5_000));
    expect(value).to.deep.equal({ cut: 0 });
    expect(ms).to.be.within(200, 2_000);
    const response = await ended;
    expect(response).to.match(/^HTTP\/1\.1 200/);
    expect(response).to.match(/\r\nConnection: close\r\n/i);
    expect(response).to.match(/done$/);
  });

  it("closes an idle kept-alive connection at once", async function () {
    const { drainable, port } = await slowServer();
    const { ended } = rawConnection(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await new Promise((resolve) => setTimeout(resolve, 100)); // answered, connection kept alive
    const { value, ms } = await timed(() => drainable.close(5_000));
    expect(value).to.deep.equal({ cut: 0 });
    expect(ms).to.be.below(1_000);
    expect(await ended).to.match(/^HTTP\/1\.1 200/);
  });

  it("cuts a request still in flight, and a connection still sending its headers, once the bound has passed", async function () {
    const { drainable, port } = await slowServer();
    const slow = rawConnection(port, "GET /?ms=60000 HTTP/1.1\r\nHost: x\r\n\r\n");
    const stalled = rawConnection(port, "GET / HTTP/1.1\r\nHost: x\r\n"); // headers never finished
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { value, ms } = await timed(() => drainable.close(400));
    expect(value).to.deep.equal({ cut: 1 });
    expect(ms).to.be.within(350, 3_000);
    expect(await slow.ended).to.equal("");
    expect(await stalled.ended).to.equal("");
  });
});
