import {
  FetchRequest,
  JsonRpcProvider,
  Network,
  type JsonRpcApiProviderOptions,
  type JsonRpcPayload,
  type JsonRpcResult,
} from "ethers";
import { maskUrl } from "../config/credentials";
import type { RpcObserver } from "../metrics/metrics";

/**
 * Caching is off (a cached nonce read right after a send comes back stale) and so is batching (it
 * holds each call back for a stall window). The network is static: the chain id is read once, so
 * a chain that goes away later is reported per request instead of sending ethers into a
 * reconnect loop.
 */
export const PROVIDER_OPTIONS: JsonRpcApiProviderOptions = {
  staticNetwork: true,
  cacheTimeout: -1,
  batchMaxCount: 1,
  pollingInterval: 1000,
};

/**
 * A JsonRpcProvider that reports every JSON-RPC call (method, round trip, failure) to an
 * observer. Subclasses change the transport alone (`transport`), so every provider the service
 * uses is observed the same way.
 */
export class ObservedJsonRpcProvider extends JsonRpcProvider {
  constructor(
    url: FetchRequest,
    network: Network,
    private readonly observer?: RpcObserver,
  ) {
    super(url, network, PROVIDER_OPTIONS);
  }

  override async _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    if (!this.observer) return this.transport(payload);
    const payloads = Array.isArray(payload) ? payload : [payload];
    const started = performance.now();
    let responses: JsonRpcResult[];
    try {
      responses = await this.transport(payload);
    } catch (err) {
      const seconds = (performance.now() - started) / 1000;
      for (const { method } of payloads) this.observer.rpcCall(method, seconds, true);
      throw err;
    }
    const seconds = (performance.now() - started) / 1000;
    const failedIds = new Set(responses.filter((r) => "error" in r).map((r) => r.id));
    for (const { id, method } of payloads) this.observer.rpcCall(method, seconds, failedIds.has(id));
    return responses;
  }

  /** Sends `payload` and returns the JSON-RPC responses (results and errors): HTTP here. */
  protected transport(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    return super._send(payload);
  }
}

/**
 * A JSON-RPC provider for `rpcUrl` whose every round trip is bounded by `timeoutMs`, with the
 * options of PROVIDER_OPTIONS and its calls reported to `observer`.
 */
export async function connectProvider(
  rpcUrl: string,
  timeoutMs: number,
  observer?: RpcObserver,
): Promise<{ provider: JsonRpcProvider; chainId: bigint }> {
  const request = new FetchRequest(rpcUrl);
  request.timeout = timeoutMs;
  const chainId = await readChainId(request);
  const provider = new ObservedJsonRpcProvider(request, Network.from(chainId), observer);
  return { provider, chainId };
}

/** One eth_chainId over plain HTTP: a provider would retry a dead endpoint forever while it starts. */
async function readChainId(request: FetchRequest): Promise<bigint> {
  const probe = request.clone();
  probe.body = { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] };
  const response = await probe.send();
  response.assertOk();
  const { result } = response.bodyJson as { result?: string };
  if (typeof result !== "string") throw new Error(`${maskUrl(request.url)} answered eth_chainId without a result`);
  return BigInt(result);
}
