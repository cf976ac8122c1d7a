import WebSocket from "ws";
import { credentialFragments, credentialScrubber, maskUrl } from "../config/credentials";

/** A head as `eth_subscribe` `newHeads` announces it: what links blocks and says whose logs they may hold. */
export interface AnnouncedHead {
  number: number;
  hash: string;
  parentHash: string;
  /** The block's 2048-bit log bloom (0x + 512 hex digits), when the node sends it. */
  logsBloom?: string;
  /** The root of the block's transactions trie: what proves a block holds only the engine's (own-blocks.ts). */
  transactionsRoot?: string;
  /** Seconds, as the block says. */
  timestamp?: number;
  baseFeePerGas?: bigint;
}

/** Where a head feed stands: subscribed, or (re)connecting after a failure. */
export type HeadFeedState = "subscribed" | "connecting";

export interface HeadSubscriptionOptions {
  /** First pause before a reconnect; it doubles at each failure in a row up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** How long a connection and its subscription may take before they count as failed. */
  connectTimeoutMs?: number;
  /** Told of each JSON-RPC call sent (eth_subscribe): what a provider bills. */
  onCall?: (method: string) => void;
  /** Told of each state change, with the masked URL and the last error (masked). */
  onState?: (state: HeadFeedState, error?: string) => void;
}

/** Something that announces heads: a WebSocket subscription, or the embedded chain in this process. */
export interface HeadSource {
  /** Announces each new head to `onHead`; `onLive` is told whenever `live` changes. */
  start(onHead: (head: AnnouncedHead) => void, onLive?: (live: boolean) => void): void;
  stop(): void;
  /** Whether heads are being announced now (subscribed, not reconnecting). */
  readonly live: boolean;
}

const DEFAULT_BACKOFF_MS = 1_000;
const DEFAULT_MAX_BACKOFF_MS = 30_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * `eth_subscribe` `newHeads` over one WebSocket URL, reconnected with backoff (1 s doubling to
 * 30 s) whenever the socket closes, errs or the subscription is refused. It only announces: the
 * block feed decides what a head means, and keeps polling as the truth (a silent socket, a head
 * skipped while reconnecting). Errors name the URL masked: its path or query may hold an API key.
 */
export class WsHeadSubscription implements HeadSource {
  private socket?: WebSocket;
  private timer?: NodeJS.Timeout;
  private failures = 0;
  private stopped = true;
  private subscribed = false;
  private onHead?: (head: AnnouncedHead) => void;
  private onLive?: (live: boolean) => void;
  private readonly scrub: (text: string) => string;
  readonly masked: string;

  constructor(
    private readonly url: string,
    private readonly options: HeadSubscriptionOptions = {},
  ) {
    this.masked = maskUrl(url);
    this.scrub = credentialScrubber(credentialFragments(url));
  }

  get live(): boolean {
    return this.subscribed;
  }

  start(onHead: (head: AnnouncedHead) => void, onLive?: (live: boolean) => void): void {
    this.onHead = onHead;
    this.onLive = onLive;
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    this.subscribed = false;
    clearTimeout(this.timer);
    this.socket?.removeAllListeners();
    this.socket?.on("error", () => {}); // a close during the handshake still errs
    this.socket?.terminate();
    this.socket = undefined;
  }

  private connect(): void {
    if (this.stopped) return;
    this.options.onState?.("connecting");
    const socket = new WebSocket(this.url, { handshakeTimeout: this.connectTimeoutMs });
    this.socket = socket;
    let subscriptionId: string | undefined;
    // Connected but never subscribed in time (a proxy that takes the socket and says nothing): try again.
    this.timer = setTimeout(() => this.fail(socket, "no subscription in time"), this.connectTimeoutMs);
    socket.on("open", () => {
      this.options.onCall?.("eth_subscribe");
      socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
    });
    socket.on("message", (data) => {
      let message: {
        id?: unknown;
        result?: unknown;
        error?: { message?: unknown };
        method?: unknown;
        params?: unknown;
      };
      try {
        message = JSON.parse(String(data)) as typeof message;
      } catch {
        return; // not JSON-RPC: nothing of ours
      }
      if (message.id === 1) {
        if (typeof message.result !== "string") {
          return this.fail(socket, `eth_subscribe refused: ${String(message.error?.message ?? "no id")}`);
        }
        subscriptionId = message.result;
        clearTimeout(this.timer);
        this.failures = 0;
        this.subscribed = true;
        this.options.onState?.("subscribed");
        this.onLive?.(true);
        return;
      }
      if (message.method !== "eth_subscription") return;
      const params = message.params as { subscription?: unknown; result?: unknown } | undefined;
      if (params?.subscription !== subscriptionId) return;
      const head = toAnnouncedHead(params?.result);
      if (head) this.onHead?.(head);
    });
    socket.on("error", (err) => this.fail(socket, err.message));
    socket.on("close", () => this.fail(socket, "connection closed"));
  }

  private get connectTimeoutMs(): number {
    return this.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  }

  /** The socket failed: closed, and a new one is tried after the backoff. Once per socket. */
  private fail(socket: WebSocket, reason: string): void {
    if (socket !== this.socket || this.stopped) return;
    this.socket = undefined;
    const wasLive = this.subscribed;
    this.subscribed = false;
    if (wasLive) this.onLive?.(false);
    socket.removeAllListeners();
    socket.on("error", () => {});
    socket.terminate();
    clearTimeout(this.timer);
    this.options.onState?.("connecting", this.scrub(reason));
    const base = this.options.backoffMs ?? DEFAULT_BACKOFF_MS;
    const pause = Math.min(base * 2 ** this.failures, this.options.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS);
    this.failures++;
    this.timer = setTimeout(() => this.connect(), pause);
  }
}

/** A newHeads notification's header, or null when it is not one. */
export function toAnnouncedHead(json: unknown): AnnouncedHead | null {
  if (json === null || typeof json !== "object") return null;
  const h = json as {
    number?: unknown;
    hash?: unknown;
    parentHash?: unknown;
    logsBloom?: unknown;
    transactionsRoot?: unknown;
    timestamp?: unknown;
    baseFeePerGas?: unknown;
  };
  if (typeof h.number !== "string" || typeof h.hash !== "string" || typeof h.parentHash !== "string") return null;
  return {
    number: Number(BigInt(h.number)),
    hash: h.hash.toLowerCase(),
    parentHash: h.parentHash.toLowerCase(),
    ...(typeof h.logsBloom === "string" ? { logsBloom: h.logsBloom.toLowerCase() } : {}),
    ...(typeof h.transactionsRoot === "string" ? { transactionsRoot: h.transactionsRoot.toLowerCase() } : {}),
    ...(typeof h.timestamp === "string" ? { timestamp: Number(BigInt(h.timestamp)) } : {}),
    ...(typeof h.baseFeePerGas === "string" ? { baseFeePerGas: BigInt(h.baseFeePerGas) } : {}),
  };
}
