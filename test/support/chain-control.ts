/**
 * Typed helpers over a `hardhat node` (Hardhat 2.29, EDR) to make the chain misbehave with the node's
 * own methods: automine and interval mining, manual mining, dropping a pending transaction, base-fee
 * spikes, snapshots. Works over anything with ethers' `send(method, params)` (a JsonRpcProvider) or over
 * a raw URL (plain `fetch`).
 *
 * Facts about the node these rely on (checked by rpc-proxy.test.ts):
 * - `hardhat_setNextBlockBaseFeePerGas` applies to the next block only (whichever way it is mined); the
 *   block after it gets the usual EIP-1559 update from there (-12.5% if empty).
 * - A transaction whose maxFeePerGas is below a block's base fee is not included and stays in the
 *   mempool (automine off); with automine on, the node rejects it when it is sent.
 * - `eth_getBlockByNumber("pending")` lists only what the next block would include; the node's
 *   `eth_pendingTransactions` lists the whole mempool (also nonce-gapped and underpriced transactions).
 *   `txpool_content` is not supported.
 * - `evm_snapshot` / `evm_revert` restore the mempool (and a pending base-fee override) too; a snapshot
 *   id can be reverted to once. The automine setting is not restored.
 */

/** Anything that can send a JSON-RPC call, as ethers' JsonRpcProvider does. */
export interface RpcSender {
  send(method: string, params: unknown[]): Promise<unknown>;
}

export type NonceTag = "latest" | "pending";

/** A JSON-RPC error answered by the node (raw-URL mode; a provider throws its own errors). */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    readonly rpcMessage: string,
    readonly data?: unknown,
  ) {
    super(`${method}: ${rpcMessage} (${code})`);
  }
}

/** A transaction of the mempool as `eth_pendingTransactions` gives it (fees as bigint). */
export interface PendingTransaction {
  hash: string;
  from: string;
  to: string | null;
  nonce: number;
  gasPrice: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
}

interface RawPendingTransaction {
  hash: string;
  from: string;
  to: string | null;
  nonce: string;
  gasPrice: string;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
}

const hex = (n: number | bigint) => `0x${n.toString(16)}`;

let nextId = 1;

export class ChainControl {
  private readonly sender: RpcSender;
  private baseFeeFloor: bigint | undefined;

  constructor(target: string | RpcSender) {
    this.sender = typeof target === "string" ? new UrlSender(target) : target;
  }

  /** Any JSON-RPC call, answered with its `result`. */
  async send<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    return (await this.sender.send(method, params)) as T;
  }

  async setAutomine(on: boolean): Promise<void> {
    await this.send("evm_setAutomine", [on]);
  }

  /** Mines a block every `ms` milliseconds; 0 turns interval mining off. */
  async setIntervalMining(ms: number): Promise<void> {
    await this.send("evm_setIntervalMining", [ms]);
  }

  /**
   * Mines `blocks` blocks. Under `keepBaseFeeAbove`, one `evm_mine` per block, each preceded by the
   * base-fee override; otherwise one `evm_mine` or `hardhat_mine`.
   */
  async mine(blocks = 1): Promise<void> {
    if (this.baseFeeFloor === undefined) {
      await (blocks === 1 ? this.send("evm_mine") : this.send("hardhat_mine", [hex(blocks)]));
      return;
    }
    for (let i = 0; i < blocks; i++) {
      const floor = this.baseFeeFloor;
      if ((await this.baseFee("pending")) <= floor) await this.setNextBlockBaseFee(floor + 1n);
      await this.send("evm_mine");
    }
  }

  /** Removes a transaction from the mempool (`hardhat_dropTransaction`); false if it was not there. */
  dropTransaction(hash: string): Promise<boolean> {
    return this.send<boolean>("hardhat_dropTransaction", [hash]);
  }

  /** The base fee of the next block only (`hardhat_setNextBlockBaseFeePerGas`). */
  async setNextBlockBaseFee(wei: bigint): Promise<void> {
    await this.send("hardhat_setNextBlockBaseFeePerGas", [hex(wei)]);
  }

  /**
   * Until the returned function is called, every block that `mine()` mines has a base fee strictly
   * above `wei` (at least wei + 1), so a transaction with maxFeePerGas <= `wei` stays in the mempool.
   * Pass the maxFeePerGas of the transaction to hold back. Blocks mined otherwise (automine, interval
   * mining, a direct `evm_mine`) are not covered: keep those off during a fee spike. With automine on,
   * the node rejects an underpriced transaction outright ("Transaction maxFeePerGas (…) is too low for
   * the next block, which has a baseFeePerGas of …").
   */
  keepBaseFeeAbove(wei: bigint): () => void {
    this.baseFeeFloor = wei;
    return () => {
      if (this.baseFeeFloor === wei) this.baseFeeFloor = undefined;
    };
  }

  /** The base fee of the latest block, or of the next one ("pending", with any override). */
  async baseFee(tag: "latest" | "pending" = "latest"): Promise<bigint> {
    const block = await this.send<{ baseFeePerGas?: string } | null>("eth_getBlockByNumber", [tag, false]);
    if (!block?.baseFeePerGas) throw new Error(`block ${tag} has no base fee`);
    return BigInt(block.baseFeePerGas);
  }

  /** An id for `revert`; it restores chain state and the mempool. */
  snapshot(): Promise<string> {
    return this.send<string>("evm_snapshot");
  }

  /** Back to the snapshot `id` (usable once); false if there is no such snapshot. */
  revert(id: string): Promise<boolean> {
    return this.send<boolean>("evm_revert", [id]);
  }

  /** The whole mempool (`eth_pendingTransactions`): queued (nonce gap) and underpriced ones too. */
  async pendingTransactions(): Promise<PendingTransaction[]> {
    const txs = await this.send<RawPendingTransaction[]>("eth_pendingTransactions");
    return txs.map((tx) => ({
      hash: tx.hash,
      from: tx.from,
      to: tx.to,
      nonce: Number(tx.nonce),
      gasPrice: BigInt(tx.gasPrice),
      ...(tx.maxFeePerGas !== undefined && { maxFeePerGas: BigInt(tx.maxFeePerGas) }),
      ...(tx.maxPriorityFeePerGas !== undefined && { maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas) }),
    }));
  }

  /** Hashes of what the next block would include (`eth_getBlockByNumber("pending")`). */
  async nextBlockTransactions(): Promise<string[]> {
    const block = await this.send<{ transactions: string[] }>("eth_getBlockByNumber", ["pending", false]);
    return block.transactions;
  }

  /** `eth_getTransactionCount`; "pending" counts the mempool's consecutive nonces (not a gapped one). */
  async nonce(address: string, tag: NonceTag = "latest"): Promise<number> {
    return Number(await this.send<string>("eth_getTransactionCount", [address, tag]));
  }

  async blockNumber(): Promise<number> {
    return Number(await this.send<string>("eth_blockNumber"));
  }
}

class UrlSender implements RpcSender {
  constructor(private readonly url: string) {}

  async send(method: string, params: unknown[]): Promise<unknown> {
    const res = await fetch(this.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
    });
    const text = await res.text();
    let json: { result?: unknown; error?: { code: number; message: string; data?: unknown } };
    try {
      json = JSON.parse(text) as typeof json;
    } catch {
      throw new Error(`${method}: HTTP ${res.status}: ${text.slice(0, 200)}`);
    }
    if (json.error) throw new RpcError(method, json.error.code, json.error.message, json.error.data);
    return json.result;
  }
}
