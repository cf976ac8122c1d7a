/**
 * The JSON-RPC transport on a kept-alive connection reset before any answer (a node that closed
 * it while idle, or one that read the request and died): a read goes again once on a new
 * connection; a broadcast never does, as the node may have taken it (the soak's double mints).
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { expect } from "chai";
import { HttpJsonRpcTransport } from "../../server/chain/http-transport";

/** Answers the first request of each connection; reads the second whole, then resets the connection. */
async function resettingServer() {
  const received: string[] = [];
  const served = new WeakMap<Socket, number>();
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      const calls = [JSON.parse(body)].flat() as { id: number; method: string }[];
      received.push(...calls.map((call) => call.method));
      const count = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, count);
      if (count === 2) return req.socket.destroy();
      res.setHeader("Content-Type", "application/json");
      const answers = calls.map((call) => ({ jsonrpc: "2.0", id: call.id, result: "0x1" }));
      res.end(JSON.stringify(Array.isArray(JSON.parse(body)) ? answers : answers[0]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe("the JSON-RPC transport on a kept-alive connection reset before any answer", function () {
  const call = (method: string, id = 1) => ({ jsonrpc: "2.0", id, method, params: [] });

  it("sends a read again, once, on a new connection", async () => {
    const server = await resettingServer();
    try {
      const transport = new HttpJsonRpcTransport(server.url, 5_000);
      await transport.send(call("eth_chainId"));
      expect(await transport.send(call("eth_blockNumber"))).to.deep.include({ result: "0x1" });
      expect(server.received).to.deep.equal(["eth_chainId", "eth_blockNumber", "eth_blockNumber"]);
    } finally {
      await server.close();
    }
  });

  it("never sends a batch carrying eth_sendRawTransaction again: the error goes to the caller", async () => {
    const server = await resettingServer();
    try {
      const transport = new HttpJsonRpcTransport(server.url, 5_000);
      await transport.send(call("eth_chainId"));
      const batch = [call("eth_blockNumber", 2), call("eth_sendRawTransaction", 3)];
      const error = await transport.send(batch).then(
        () => null,
        (err: unknown) => err as { code?: string },
      );
      expect(error?.code).to.equal("ECONNRESET");
      expect(server.received).to.deep.equal(["eth_chainId", "eth_blockNumber", "eth_sendRawTransaction"]);
    } finally {
      await server.close();
    }
  });
});
