import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { RpcRequestOutcome, RpcUrlObserver } from "../chain/rpc-failover";

/** What a provider's transport reports for each JSON-RPC call (see server/chain/provider.ts). */
export interface RpcObserver {
  /** One call of `method` took `seconds`; `failed` when it threw or answered a JSON-RPC error. */
  rpcCall(method: string, seconds: number, failed: boolean): void;
}

/** The operation states of API.md, exported at 0 from the start so that dashboards see every series. */
const OPERATION_STATUSES = ["queued", "sent", "confirmed", "failed"];

/** Route label of a request no route matched: the raw path would let clients grow the label set. */
export const UNMATCHED_ROUTE = "(unmatched)";

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 30];
const RPC_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface MetricsOptions {
  /** Add prom-client's default process metrics (CPU, memory, event loop lag, GC); default true. */
  processMetrics?: boolean;
}

/**
 * The service's Prometheus metrics, in a registry of their own (never prom-client's global one),
 * so that one process can hold several apps, each with its own figures.
 */
export class ServiceMetrics implements RpcObserver, RpcUrlObserver {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<"method" | "route" | "status">;
  private readonly httpDuration: Histogram<"method" | "route" | "status">;
  private readonly rpcCalls: Counter<"method" | "chain">;
  private readonly rpcErrors: Counter<"method" | "chain">;
  private readonly rpcDuration: Histogram<"method" | "chain">;
  private readonly rpcRequests: Counter<"chain" | "url" | "outcome">;
  private readonly operations: Counter<"status" | "chain">;
  private readonly nonceAllocations: Counter<"chain">;
  private readonly signerPoolSize: Gauge;
  private readonly blockSeenLag: Histogram<"chain">;

  constructor({ processMetrics = true }: MetricsOptions = {}) {
    const registers = [this.registry];
    this.httpRequests = new Counter({
      name: "http_requests_total",
      help: "HTTP requests answered, by method, route template and status",
      labelNames: ["method", "route", "status"],
      registers,
    });
    this.httpDuration = new Histogram({
      name: "http_request_duration_seconds",
      help: "Time to answer an HTTP request, by method, route template and status",
      labelNames: ["method", "route", "status"],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.rpcCalls = new Counter({
      name: "rpc_calls_total",
      help: "JSON-RPC calls sent to the chain, by method and chain",
      labelNames: ["method", "chain"],
      registers,
    });
    this.rpcErrors = new Counter({
      name: "rpc_call_errors_total",
      help: "JSON-RPC calls that failed (no answer, or a JSON-RPC error such as a revert), by method and chain",
      labelNames: ["method", "chain"],
      registers,
    });
    this.rpcDuration = new Histogram({
      name: "rpc_call_duration_seconds",
      help: "Round trip of one JSON-RPC call, by method and chain",
      labelNames: ["method", "chain"],
      buckets: RPC_BUCKETS,
      registers,
    });
    this.rpcRequests = new Counter({
      name: "rpc_requests_total",
      help: "JSON-RPC calls sent to each RPC URL (masked), by chain and outcome (ok, timeout, http_error, connection_error, internal_error, behind)",
      labelNames: ["chain", "url", "outcome"],
      registers,
    });
    this.operations = new Counter({
      name: "operations_total",
      help: "Write operations entering each status (queued, sent, confirmed, failed), by chain",
      labelNames: ["status", "chain"],
      registers,
    });
    for (const status of OPERATION_STATUSES) this.operations.inc({ status }, 0);
    this.nonceAllocations = new Counter({
      name: "nonce_allocations_total",
      help: "Nonces handed out to transactions being signed, by chain",
      labelNames: ["chain"],
      registers,
    });
    this.nonceAllocations.inc(0);
    this.signerPoolSize = new Gauge({
      name: "signer_pool_size",
      help: "Signing keys held in memory by the signer pool",
      registers,
    });
    this.blockSeenLag = new Histogram({
      name: "block_seen_lag_seconds",
      help: "From a new block's timestamp to the service knowing the block (by a head subscription or a poll), by chain; block timestamps are whole seconds",
      labelNames: ["chain"],
      buckets: LAG_BUCKETS,
      registers,
    });
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** The Content-Type of `render()`: Prometheus text format 0.0.4. */
  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  /**
   * operations_sharing_transaction, read from the store at each scrape: operations that share a
   * transaction hash or a mined nonce with another (issue 51). It must stay 0; a store that does not
   * answer keeps the last value, so that /metrics still answers.
   */
  watchSharedTransactions(count: () => Promise<number>): void {
    new Gauge({
      name: "operations_sharing_transaction",
      help: "Operations that share a transaction hash, or a mined nonce of their sender, with another operation in the store: two requests answered with one transaction. Must stay 0",
      registers: [this.registry],
      async collect() {
        await count().then(
          (n) => this.set(n),
          () => undefined,
        );
      },
    });
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  /**
   * The same series for one chain, labelled `chain` (its id): what a chain unit's provider and engine
   * report to. `chain` may be set later (RPC_URL: the first URL's answer gives the id); until then,
   * and for what is wired without a chain (tests), the series carry no chain label. The unlabelled
   * zeros exported from the start give way to this chain's.
   */
  forChain(chain?: string): ChainMetrics {
    const labelled = new ChainMetrics(this);
    if (chain !== undefined) labelled.label(chain);
    return labelled;
  }

  /** Starts `chain`'s operation and nonce series at 0, in place of the unlabelled ones. */
  addChain(chain: string): void {
    for (const status of OPERATION_STATUSES) {
      this.operations.remove({ status });
      this.operations.inc({ status, chain }, 0);
    }
    this.nonceAllocations.remove({});
    this.nonceAllocations.inc({ chain }, 0);
  }

  rpcCall(method: string, seconds: number, failed: boolean, chain?: string): void {
    const labels = chain === undefined ? { method } : { method, chain };
    this.rpcCalls.inc(labels);
    this.rpcDuration.observe(labels, seconds);
    if (failed) this.rpcErrors.inc(labels);
  }

  rpcRequest(chain: string, url: string, outcome: RpcRequestOutcome, calls: number): void {
    this.rpcRequests.inc({ chain, url, outcome }, calls);
  }

  /** An operation entered `status` (the transaction engine calls this on every transition). */
  operationStatus(status: string, chain?: string): void {
    this.operations.inc(chain === undefined ? { status } : { status, chain });
  }

  /** A nonce was allocated for a transaction about to be signed. */
  nonceAllocated(count = 1, chain?: string): void {
    if (chain === undefined) this.nonceAllocations.inc(count);
    else this.nonceAllocations.inc({ chain }, count);
  }

  setSignerPoolSize(size: number): void {
    this.signerPoolSize.set(size);
  }

  blockSeen(lagSeconds: number, chain?: string): void {
    this.blockSeenLag.observe(chain === undefined ? {} : { chain }, Math.max(0, lagSeconds));
  }
}

/** One chain's view of the service's metrics: every call and operation it reports carries its id. */
export class ChainMetrics implements RpcObserver {
  private chain?: string;

  constructor(private readonly all: ServiceMetrics) {}

  /** Names the chain, once its id is known. */
  label(chain: string): void {
    this.chain = chain;
    this.all.addChain(chain);
  }

  rpcCall(method: string, seconds: number, failed: boolean): void {
    this.all.rpcCall(method, seconds, failed, this.chain);
  }

  operationStatus(status: string): void {
    this.all.operationStatus(status, this.chain);
  }

  nonceAllocated(count = 1): void {
    this.all.nonceAllocated(count, this.chain);
  }

  setSignerPoolSize(size: number): void {
    this.all.setSignerPoolSize(size);
  }

  /** A new block became known `lagSeconds` after its timestamp. */
  blockSeen(lagSeconds: number): void {
    this.all.blockSeen(lagSeconds, this.chain);
  }
}
