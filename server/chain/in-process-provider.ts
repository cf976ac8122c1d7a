import { Network, type JsonRpcPayload, type JsonRpcResult } from "ethers";
import type { RpcObserver } from "../metrics/metrics";
import { toAnnouncedHead, type AnnouncedHead, type HeadSource } from "./head-subscription";
import { ObservedJsonRpcProvider } from "./provider";

/** An EIP-1193 provider living in this process (Hardhat's `hre.network.provider`). */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] | object }): Promise<unknown>;
  /** Hardhat's provider emits each subscription's notifications as "message" events. */
  on?(event: "message", listener: (message: unknown) => void): unknown;
  removeListener?(event: "message", listener: (message: unknown) => void): unknown;
}

/** JSON-RPC's "internal error", for a failure that carries no code of its own. */
const INTERNAL_ERROR = -32603;

/**
 * The service's provider when the chain runs in this process: each JSON-RPC call is a function
 * call on the EIP-1193 provider, with no HTTP loopback; everything else is the HTTP provider's.
 * Errors are answered in the shape Hardhat's JSON-RPC server gives them, so that ethers decodes
 * reverts the same way in both modes.
 */
export class InProcessJsonRpcProvider extends ObservedJsonRpcProvider {
  constructor(
    private readonly chain: Eip1193Provider,
    network: Network,
    observer?: RpcObserver,
  ) {
    super(network, observer);
  }

  protected override transport(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    return Promise.all((Array.isArray(payload) ? payload : [payload]).map((one) => this.callInProcess(one)));
  }

  private async callInProcess({ id, method, params }: JsonRpcPayload): Promise<JsonRpcResult> {
    try {
      // A JSON round trip, as over HTTP: drops `undefined` fields the chain would refuse, and keeps
      // the chain from holding on to objects ethers owns.
      const copied = params === undefined ? [] : (JSON.parse(JSON.stringify(params)) as unknown[]);
      return { id, result: await this.chain.request({ method, params: copied }) };
    } catch (err) {
      return { id, ...errorResponse(err) } as unknown as JsonRpcResult;
    }
  }
}

/** Connects to an in-process chain: its chain id is read once, as for an HTTP endpoint. */
export async function connectInProcess(
  chain: Eip1193Provider,
  observer?: RpcObserver,
): Promise<{ provider: InProcessJsonRpcProvider; chainId: bigint; heads?: HeadSource }> {
  const chainId = BigInt((await chain.request({ method: "eth_chainId", params: [] })) as string);
  return {
    provider: new InProcessJsonRpcProvider(chain, Network.from(chainId), observer),
    chainId,
    ...(chain.on && chain.removeListener ? { heads: new InProcessHeads(chain) } : {}),
  };
}

/**
 * New heads of a chain in this process: its own `eth_subscribe` `newHeads`, whose notifications
 * Hardhat's provider emits as "message" events the moment a block is mined (no poll, no socket).
 */
export class InProcessHeads implements HeadSource {
  private subscription?: string;
  private listener?: (message: unknown) => void;

  constructor(private readonly chain: Eip1193Provider) {}

  get live(): boolean {
    return this.subscription !== undefined;
  }

  start(onHead: (head: AnnouncedHead) => void, onLive?: (live: boolean) => void): void {
    this.listener = (message) => {
      const m = message as { type?: unknown; data?: { subscription?: unknown; result?: unknown } };
      if (m?.type !== "eth_subscription" || m.data?.subscription !== this.subscription) return;
      const head = toAnnouncedHead(m.data?.result);
      if (head) onHead(head);
    };
    this.chain.on!("message", this.listener);
    this.chain.request({ method: "eth_subscribe", params: ["newHeads"] }).then(
      (id) => {
        this.subscription = String(id);
        onLive?.(true);
      },
      () => {}, // no subscription: the block feed polls
    );
  }

  stop(): void {
    if (this.listener) this.chain.removeListener!("message", this.listener);
    this.listener = undefined;
    const id = this.subscription;
    this.subscription = undefined;
    if (id) this.chain.request({ method: "eth_unsubscribe", params: [id] }).catch(() => {});
  }
}

/** The JSON-RPC error member Hardhat's server would send for `err` (code, message, data.data = revert data). */
function errorResponse(err: unknown): { error: { code: number; message: string; data: Record<string, unknown> } } {
  const e = (typeof err === "object" && err !== null ? err : { message: String(err) }) as {
    code?: unknown;
    message?: unknown;
    data?: unknown;
    transactionHash?: unknown;
  };
  const code = typeof e.code === "number" ? e.code : INTERNAL_ERROR;
  const message = typeof e.message === "string" ? e.message : "Internal error";
  const nested =
    typeof e.data === "object" && e.data !== null
      ? (e.data as { data?: unknown; transactionHash?: unknown })
      : undefined;
  const returnData = nested ? nested.data : e.data;
  const txHash = e.transactionHash ?? nested?.transactionHash;
  return {
    error: {
      code,
      message,
      data: {
        message,
        ...(txHash !== undefined ? { txHash } : {}),
        ...(returnData !== undefined ? { data: returnData } : {}),
      },
    },
  };
}
