/**
 * The store bound to its chain (API.md, "Runtime shape"). Operations, nonces, idempotency keys,
 * the index and undelivered webhook events are facts about one chain: the store remembers each
 * chain id's genesis hash and one block beyond reorg reach (the anchor), checks them at every start,
 * and clears a chain's data when it is gone (the embedded chain, new at each start) or when the
 * operator says so (`npm run store:forget-chain`). Wallets, access keys, webhook endpoints, users
 * and audit events belong to no chain and are never touched here.
 */
import { toQuantity } from "ethers";
import type { SqlDriver } from "../db";
import type { Logger } from "../http/logger";
import type { Rpc } from "./rpc";

/** The command that clears a chain's data from the store, as start failures name it. */
export const FORGET_CHAIN_COMMAND = "npm run store:forget-chain";

/** Blocks this deep are the store's chain for good: the index undoes reorgs up to here, no deeper (its KEPT_BLOCK_HASHES). */
export const REORG_REACH = 256;

/** How often a running service moves the anchor up with the chain. */
const RECORD_EVERY_MS = 30_000;

/** What clearing a chain's data removed, for the banner and the command's line. */
export interface ChainDataCleared {
  operations: number;
  idempotencyKeys: number;
  nonces: number;
  collections: number;
  webhookEvents: number;
}

/** The chain behind RPC_URL lacks blocks the store has seen: the start stops with this message. */
export class ChainMismatchError extends Error {}

interface BindingRow {
  genesis_hash: string;
  anchor_number: string | number;
  anchor_hash: string;
}

async function blockHash(rpc: Rpc, number: number): Promise<string | null> {
  const block = await rpc.call<{ hash: string } | null>("eth_getBlockByNumber", [toQuantity(number), false]);
  return block?.hash ?? null;
}

/**
 * Removes what the store holds about chain `chainId`, in one transaction: its operations (and so
 * their idempotency keys), nonces, the index, allowlists, vouchers and jobs, and the chain's webhook events not
 * delivered yet (other chains' are theirs). Forgets the chain's blocks too.
 */
export async function forgetChain(db: SqlDriver, chainId: string): Promise<ChainDataCleared> {
  return db.transaction(async (tx) => {
    const count = async (sql: string) => Number((await tx.query<{ n: string | number }>(sql, [chainId])).rows[0].n);
    const ops = await tx.query<{ operations: string | number; keys: string | number }>(
      `WITH gone AS (DELETE FROM operations WHERE chain_id = $1 RETURNING idempotency_key)
       SELECT count(*) AS operations, count(idempotency_key) AS keys FROM gone`,
      [chainId],
    );
    const nonces = await count(
      `WITH gone AS (DELETE FROM nonces WHERE chain_id = $1 RETURNING 1) SELECT count(*) AS n FROM gone`,
    );
    await tx.query("DELETE FROM recycled_nonces WHERE chain_id = $1", [chainId]);
    // The index's per-log and per-token tables have no foreign key to cascade through (migrations 32, 34): deleted first.
    for (const table of [
      "index_transfers",
      "index_tokens",
      "index_edition_transfers",
      "index_editions",
      "index_edition_balances",
      "index_edition_holders",
    ])
      await tx.query(
        `DELETE FROM ${table} WHERE collection_id IN (SELECT id FROM indexed_collections WHERE chain_id = $1)`,
        [chainId],
      );
    const collections = await count(
      `WITH gone AS (DELETE FROM indexed_collections WHERE chain_id = $1 RETURNING 1) SELECT count(*) AS n FROM gone`,
    );
    await tx.query("DELETE FROM index_blocks WHERE chain_id = $1", [chainId]);
    // The drops of that chain: allowlists and their entries, and the vouchers signed for it.
    await tx.query("DELETE FROM allowlist_entries WHERE chain_id = $1", [chainId]);
    await tx.query("DELETE FROM allowlists WHERE chain_id = $1", [chainId]);
    await tx.query("DELETE FROM vouchers WHERE chain_id = $1", [chainId]);
    await tx.query("DELETE FROM metadata_documents WHERE chain_id = $1", [chainId]);
    await tx.query("DELETE FROM metadata_collections WHERE chain_id = $1", [chainId]);
    // Its jobs (their batches and rows go with them): their operations are gone with the chain.
    await tx.query("DELETE FROM jobs WHERE chain_id = $1", [chainId]);
    // Undelivered: the deliveries still pending (the delivered and failed ones are the delivery log).
    const { rows } = await tx.query<{ n: string | number }>(
      `WITH gone AS (DELETE FROM webhook_deliveries d USING webhook_events e
                     WHERE d.status = 'pending' AND e.seq = d.event_seq AND e.chain_id = $1 RETURNING d.event_seq)
       SELECT count(DISTINCT event_seq) AS n FROM gone`,
      [chainId],
    );
    await tx.query("DELETE FROM chain_binding WHERE chain_id = $1", [chainId]);
    return {
      operations: Number(ops.rows[0].operations),
      idempotencyKeys: Number(ops.rows[0].keys),
      nonces,
      collections,
      webhookEvents: Number(rows[0].n),
    };
  });
}

/**
 * Records chain `chainId`'s genesis and its newest block beyond reorg reach. The anchor only moves
 * up, and only while the genesis is the one bound: a node swapped under a running service is found
 * at the next start, not written over.
 */
export async function recordChainBlocks(db: SqlDriver, rpc: Rpc, chainId: string): Promise<void> {
  const head = Number(BigInt(await rpc.call<string>("eth_blockNumber", [])));
  const anchorNumber = Math.max(0, head - REORG_REACH);
  const [genesis, anchor] = await Promise.all([blockHash(rpc, 0), blockHash(rpc, anchorNumber)]);
  if (!genesis || !anchor) return;
  await db.query(
    `INSERT INTO chain_binding (chain_id, genesis_hash, anchor_number, anchor_hash) VALUES ($1, $2, $3, $4)
     ON CONFLICT (chain_id) DO UPDATE SET anchor_number = EXCLUDED.anchor_number, anchor_hash = EXCLUDED.anchor_hash,
       updated_at = now()
     WHERE chain_binding.genesis_hash = EXCLUDED.genesis_hash AND chain_binding.anchor_number < EXCLUDED.anchor_number`,
    [chainId, genesis, anchorNumber, anchor],
  );
}

/**
 * Throws ChainMismatchError, naming FORGET_CHAIN_COMMAND, when the chain lacks the blocks the store
 * has seen of chain `chainId` (another genesis; no anchor block, or another one there). A reorg
 * within REORG_REACH of the head the store last saw changes neither.
 */
export async function checkChainBlocks(db: SqlDriver, rpc: Rpc, chainId: string): Promise<void> {
  const { rows } = await db.query<BindingRow>(
    "SELECT genesis_hash, anchor_number, anchor_hash FROM chain_binding WHERE chain_id = $1",
    [chainId],
  );
  const bound = rows[0];
  if (!bound) return;
  const anchorNumber = Number(bound.anchor_number);
  const [genesis, anchor] = await Promise.all([blockHash(rpc, 0), blockHash(rpc, anchorNumber)]);
  let lacks: string | undefined;
  if (genesis !== bound.genesis_hash)
    lacks = `its block 0 is ${short(genesis)}, the store's is ${short(bound.genesis_hash)}`;
  else if (anchor === null) lacks = `it has no block ${anchorNumber}, which the store has seen`;
  else if (anchor !== bound.anchor_hash)
    lacks = `its block ${anchorNumber} is ${short(anchor)}, the store's is ${short(bound.anchor_hash)}`;
  if (!lacks) return;
  throw new ChainMismatchError(
    `The chain behind RPC_URL (chain id ${chainId}) is not the one this store has worked with: ${lacks} ` +
      `(a local node restarted, or another network behind the URL). To clear what the store holds about ` +
      `chain ${chainId} (operations, nonces, idempotency keys, the index; wallets, keys, webhooks and users stay), ` +
      `run \`${FORGET_CHAIN_COMMAND}\` with the same settings; or point RPC_URL at the chain the store knows`,
  );
}

const short = (hash: string | null) => (hash ? `${hash.slice(0, 10)}…` : "missing");

/**
 * Binds the store to the chain at start, before anything reads it. `fresh`: the chain is new at
 * every start (the embedded Hardhat network), so what the store holds about its chain id is of a
 * chain that no longer exists, and is cleared (returned, for the banner). Otherwise the chain is
 * checked against the blocks the store has seen (checkChainBlocks).
 */
export async function bindStoreToChain(
  db: SqlDriver,
  rpc: Rpc,
  chainId: string,
  fresh: boolean,
): Promise<ChainDataCleared | undefined> {
  let cleared: ChainDataCleared | undefined;
  if (fresh) cleared = await forgetChain(db, chainId);
  else await checkChainBlocks(db, rpc, chainId);
  await recordChainBlocks(db, rpc, chainId);
  return cleared;
}

/** Moves the anchor up while the service runs (every RECORD_EVERY_MS); a chain that does not answer is skipped. */
export class ChainBlockRecorder {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly db: SqlDriver,
    private readonly rpc: Rpc,
    private readonly chainId: string,
    private readonly logger: Logger,
    private readonly everyMs = RECORD_EVERY_MS,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = recordChainBlocks(this.db, this.rpc, this.chainId)
        .catch((err: unknown) =>
          this.logger.debug({ err: err instanceof Error ? err.message : String(err) }, "recording chain blocks failed"),
        )
        .finally(() => (this.running = undefined));
    }, this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
