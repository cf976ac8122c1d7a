import { FetchRequest, JsonRpcProvider, Network } from "ethers";

/**
 * A JSON-RPC provider for `rpcUrl` whose every round trip is bounded by `timeoutMs`.
 * Caching is off (a cached nonce read right after a send comes back stale) and so is batching
 * (it holds each call back for a stall window). The chain id is read once, so a chain that goes
 * away later is reported per request instead of sending ethers into a reconnect loop.
 */
export async function connectProvider(
  rpcUrl: string,
  timeoutMs: number,
): Promise<{ provider: JsonRpcProvider; chainId: bigint }> {
  const request = new FetchRequest(rpcUrl);
  request.timeout = timeoutMs;
  const chainId = await readChainId(request);
  const provider = new JsonRpcProvider(request, Network.from(chainId), {
    staticNetwork: true,
    cacheTimeout: -1,
    batchMaxCount: 1,
    pollingInterval: 1000,
  });
  return { provider, chainId };
}

/** One eth_chainId over plain HTTP: a provider would retry a dead endpoint forever while it starts. */
async function readChainId(request: FetchRequest): Promise<bigint> {
  const probe = request.clone();
  probe.body = { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] };
  const response = await probe.send();
  response.assertOk();
  const { result } = response.bodyJson as { result?: string };
  if (typeof result !== "string") throw new Error(`${request.url} answered eth_chainId without a result`);
  return BigInt(result);
}
