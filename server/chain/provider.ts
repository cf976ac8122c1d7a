import {
  FetchRequest,
  JsonRpcProvider,
  Network,
  type JsonRpcApiProviderOptions,
  type JsonRpcPayload,
  type JsonRpcResult,
} from "ethers";
import type { RpcObserver } from "../metrics/metrics";
import { HttpJsonRpcTransport } from "./http-transport";

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

/** The URL handed to JsonRpcProvider, which never fetches it: `transport` carries every call. */
const NO_FETCH = "about:blank";

/**
 * A JsonRpcProvider whose transport is its subclass's, and which reports every JSON-RPC call
 * (method, round trip, failure) to an observer, so that every provider the service uses is
 * observed the same way. It stays a JsonRpcProvider (not only a JsonRpcApiProvider) so that it
 * goes wherever the service expects one.
 */
export abstract class ObservedJsonRpcProvider extends JsonRpcProvider {
  constructor(
    network: Network,
    private readonly observer?: RpcObserver,
  ) {
    super(new FetchRequest(NO_FETCH), network, PROVIDER_OPTIONS);
  }

  override async _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    if (!this.observer) return this.transport(payload);
    const started = performance.now();
    let responses: JsonRpcResult[];
    try {
      responses = await this.transport(payload);
    } catch (err) {
      const seconds = (performance.now() - started) / 1000;
      for (const { method } of Array.isArray(payload) ? payload : [payload])
        this.observer.rpcCall(method, seconds, true);
      throw err;
    }
    const seconds = (performance.now() - started) / 1000;
    if (!Array.isArray(payload)) {
      this.observer.rpcCall(
        payload.method,
        seconds,
        responses.some((r) => "error" in r),
      );
    } else {
      const failed = new Set(responses.filter((r) => "error" in r).map((r) => r.id));
      for (const { id, method } of payload) this.observer.rpcCall(method, seconds, failed.has(id));
    }
    return responses;
  }

  /** Sends `payload` and returns the JSON-RPC responses, results and errors alike. */
  protected abstract transport(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]>;
}

/** The service's provider for a JSON-RPC endpoint over HTTP(S) (RPC_URL). */
export class HttpJsonRpcProvider extends ObservedJsonRpcProvider {
  constructor(
    private readonly http: HttpJsonRpcTransport,
    network: Network,
    observer?: RpcObserver,
  ) {
    super(network, observer);
  }

  protected override async transport(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    const answer = await this.http.send(payload);
    return (Array.isArray(answer) ? answer : [answer]) as JsonRpcResult[];
  }

  override destroy(): void {
    super.destroy();
    this.http.close();
  }
}

/**
 * A provider for `rpcUrl` whose every round trip is bounded by `timeoutMs`, with the options of
 * PROVIDER_OPTIONS and its calls reported to `observer`. The chain id is asked once, directly:
 * a provider would retry a dead endpoint forever while it starts.
 */
export async function connectProvider(
  rpcUrl: string,
  timeoutMs: number,
  observer?: RpcObserver,
): Promise<{ provider: JsonRpcProvider; chainId: bigint }> {
  const http = new HttpJsonRpcTransport(rpcUrl, timeoutMs);
  try {
    const answer = (await http.send({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] })) as {
      result?: unknown;
    };
    if (typeof answer?.result !== "string")
      throw new Error("The JSON-RPC endpoint answered eth_chainId without a result");
    const chainId = BigInt(answer.result);
    return { provider: new HttpJsonRpcProvider(http, Network.from(chainId), observer), chainId };
  } catch (err) {
    http.close();
    throw err;
  }
}
