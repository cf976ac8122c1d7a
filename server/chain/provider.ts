import {
  FetchRequest,
  JsonRpcProvider,
  Network,
  type JsonRpcApiProviderOptions,
  type JsonRpcPayload,
  type JsonRpcResult,
} from "ethers";
import type { RpcObserver } from "../metrics/metrics";
import { WsHeadSubscription, type HeadSource } from "./head-subscription";
import { FailoverTransport, isWebSocketUrl, type RpcUrlObserver, type RpcUrlState } from "./rpc-failover";
import { Rpc } from "./rpc";
import { markUnanswered } from "./unanswered";

/** What carries a provider's JSON-RPC: one call or a batch in, the parsed JSON answer out. */
export interface JsonRpcSender {
  send(body: unknown): Promise<unknown>;
  close(): void;
}

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
    const started = performance.now();
    let responses: JsonRpcResult[];
    try {
      responses = await this.transport(payload);
    } catch (err) {
      const seconds = (performance.now() - started) / 1000;
      for (const { method } of Array.isArray(payload) ? payload : [payload])
        this.observer?.rpcCall(method, seconds, true);
      // No answer from the chain at all (the transport tried every URL): a request answers 503 for it.
      throw markUnanswered(err);
    }
    if (!this.observer) return responses;
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

/** The service's provider for a chain's JSON-RPC URLs over HTTP(S) (RPC_URL). */
export class HttpJsonRpcProvider extends ObservedJsonRpcProvider {
  constructor(
    private readonly http: JsonRpcSender,
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

/** One chain's RPC URLs, as the chain's configuration names them (CHAINS, or RPC_URL's comma list). */
export interface RpcUrlsSpec {
  /** The chain id every URL must answer; unset = the id the first URL that answers gives. */
  chainId?: bigint;
  rpcUrls: string[];
  /** Where to subscribe to new heads (a chain entry's `wsUrl`); unset = the first ws(s):// URL of `rpcUrls`, if any. */
  wsUrl?: string;
  /** RPC_TIMEOUT_MS: bound on one round trip to one URL. */
  timeoutMs: number;
  /** RPC_MAX_LAG_BLOCKS. */
  maxLagBlocks: number;
  /**
   * CHAIN_START_TIMEOUT_MS: how long a chain whose id is unknown waits for a URL to answer it,
   * asking again with backoff after transient errors; 0 = ask once.
   */
  startTimeoutMs?: number;
  /** JSON-RPC calls as the provider makes them (by method), for rpc_calls_total and friends. */
  observer?: RpcObserver;
  /** Requests per URL and outcome, for rpc_requests_total{chain,url,outcome}. */
  urlObserver?: RpcUrlObserver;
}

/** What a chain's client needs from its URLs: the provider, the chain id, and each URL's state. */
export interface ConnectedRpcUrls {
  provider: JsonRpcProvider;
  chainId: bigint;
  /** Each URL's state (masked URL, ok|down|behind, last error, calls), for /health and GET /chains. */
  rpcUrls(): RpcUrlState[];
  /** New heads by `eth_subscribe`, where the chain has a WebSocket URL; not started yet. */
  heads?: HeadSource;
  /** How a chain that did not answer at start joins later (see ChainGate). */
  gate: ChainGate;
}

/**
 * A chain's traffic, held while the chain is not known to be the one the store has worked with:
 * its URLs have not answered at start, so the store's check of its blocks waits for them. While
 * held every call fails at once as the chain not answering (503 CHAIN_UNAVAILABLE on a request).
 */
export interface ChainGate {
  /** Whether some URL has answered the chain id. */
  readonly answered: boolean;
  /** Asks the URLs that have not answered the chain id yet; whether one has now. */
  reach(): Promise<boolean>;
  hold(): void;
  release(): void;
  /** JSON-RPC through the hold: the store binding's check of the chain's blocks. */
  readonly rpc: Rpc;
}

/**
 * A provider over `spec.rpcUrls` with failover (server/chain/rpc-failover.ts), whose every round
 * trip is bounded by `timeoutMs`, with the options of PROVIDER_OPTIONS. Every URL is asked
 * `eth_chainId` at start: one that answers another id throws (one line naming it, masked), one that
 * does not answer starts down. None answering: with `chainId` set the chain starts down (`gate`
 * says so); without, the URLs are asked again with backoff up to `startTimeoutMs`, then the start
 * stops (FailoverTransport.checkChainId).
 */
export async function connectRpcUrls(spec: RpcUrlsSpec): Promise<ConnectedRpcUrls> {
  const transport = new FailoverTransport(spec.rpcUrls, {
    timeoutMs: spec.timeoutMs,
    maxLagBlocks: spec.maxLagBlocks,
    observer: spec.urlObserver,
  });
  try {
    const chainId = await transport.checkChainId(spec.chainId, spec.startTimeoutMs);
    transport.label(chainId.toString());
    const wsUrl = spec.wsUrl ?? spec.rpcUrls.find(isWebSocketUrl);
    const network = Network.from(chainId);
    const through = new HttpJsonRpcProvider({ send: (body) => transport.sendHeld(body), close() {} }, network);
    return {
      provider: new HttpJsonRpcProvider(transport, network, spec.observer),
      chainId,
      rpcUrls: () => transport.states(),
      ...(wsUrl
        ? { heads: new WsHeadSubscription(wsUrl, { onCall: (m) => spec.observer?.rpcCall(m, 0, false) }) }
        : {}),
      gate: {
        get answered() {
          return transport.answered;
        },
        reach: () => transport.reach(),
        hold: () => transport.hold(),
        release: () => transport.release(),
        rpc: new Rpc(through),
      },
    };
  } catch (err) {
    transport.close();
    throw err;
  }
}

/** RPC_URL's comma-separated URLs. */
export function splitRpcUrls(rpcUrl: string): string[] {
  return rpcUrl
    .split(",")
    .map((url) => url.trim())
    .filter((url) => url !== "");
}

/**
 * A provider for `rpcUrl` (one URL, or several comma-separated), PROVIDER_OPTIONS, its calls
 * reported to `observer`: connectRpcUrls with RPC_MAX_LAG_BLOCKS' default.
 */
export async function connectProvider(
  rpcUrl: string,
  timeoutMs: number,
  observer?: RpcObserver,
): Promise<{ provider: JsonRpcProvider; chainId: bigint }> {
  return connectRpcUrls({ rpcUrls: splitRpcUrls(rpcUrl), timeoutMs, maxLagBlocks: 5, observer });
}
