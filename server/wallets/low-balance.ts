import type { ChainClient } from "../chain/chain-client";
import type { SqlDriver, SqlExecutor } from "../db";
import type { Logger } from "../http/logger";
import { emitEvent } from "../webhooks/events";

/** How a wallet's balance stands against its `lowBalance` since it was last looked at. */
export type BalanceCrossing = "fell-below" | "recovered";

/**
 * Records `balance` against the wallet's `lowBalance` and says whether it crossed it: "fell-below"
 * once when it goes under (emit `wallet.low_balance` then, on the same `tx`), "recovered" once when
 * it is back at or above, null otherwise (no threshold, no wallet, or no crossing). One atomic
 * UPDATE: instances that see the same balance together report a crossing once between them.
 * Changing `lowBalance` (PATCH) re-arms it. The threshold is the chain's own, else `*`'s; the
 * crossing state is the chain's (`chainId`; `*` itself by default).
 */
export async function balanceCrossing(
  tx: SqlExecutor,
  address: string,
  balance: bigint,
  chainId = "*",
): Promise<BalanceCrossing | null> {
  const { rows } = await tx.query<{ below_low_balance: boolean }>(
    `WITH threshold AS (
       SELECT COALESCE((SELECT low_balance FROM wallet_policies WHERE address = $1 AND chain_id = $3),
                       (SELECT low_balance FROM wallet_policies WHERE address = $1 AND chain_id = '*')) AS low)
     INSERT INTO wallet_policies AS p (address, chain_id, below_low_balance)
     SELECT $1, $3, $2::numeric < t.low FROM threshold t
     WHERE t.low IS NOT NULL AND EXISTS (SELECT 1 FROM wallets WHERE address = $1)
     ON CONFLICT (address, chain_id) DO UPDATE SET below_low_balance = EXCLUDED.below_low_balance
       WHERE p.below_low_balance <> EXCLUDED.below_low_balance
     RETURNING below_low_balance, (xmax = 0) AS inserted`,
    [address, balance.toString(), chainId],
  );
  // A chain's first look makes its row: only a balance found below is a crossing then.
  if (rows.length === 0 || ((rows[0] as { inserted?: boolean }).inserted === true && !rows[0].below_low_balance))
    return null;
  return rows[0].below_low_balance ? "fell-below" : "recovered";
}

/** How often held wallets with a `lowBalance` have their balance read. */
const LOW_BALANCE_POLL_MS = 5_000;

interface WatchedRow {
  address: string;
  label: string;
  low_balance: string;
  below_low_balance: boolean;
}

/**
 * Emits `wallet.low_balance` once each time a held wallet's balance falls below its `lowBalance`:
 * every `intervalMs` it reads the balances of the wallets that have one (one JSON-RPC batch), and
 * for a wallet whose side of the threshold changed, records the crossing (balanceCrossing, which
 * lets one process report it) and writes the event on one transaction.
 */
export class LowBalanceWatcher {
  private timer?: NodeJS.Timeout;
  /** The check under way: the next waits for it. */
  private running?: Promise<void>;

  constructor(
    private readonly db: SqlDriver,
    private readonly chain: Pick<ChainClient, "rpc" | "options">,
    private readonly logger: Logger,
    private readonly intervalMs = LOW_BALANCE_POLL_MS,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.check()
        .then(
          () => undefined,
          (err: unknown) =>
            this.logger.warn(
              { err: err instanceof Error ? err.message.slice(0, 200) : String(err) },
              "reading the balances of wallets with a lowBalance failed; trying again",
            ),
        )
        .finally(() => (this.running = undefined));
    }, this.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One look at every watched wallet; answers how many events it wrote. */
  async check(): Promise<number> {
    const chainId = this.chain.options.chainId.toString();
    // Each wallet's threshold on this chain (its own, else `*`'s) and this chain's crossing state.
    const { rows } = await this.db.query<WatchedRow>(
      `SELECT w.address, w.label, COALESCE(c.low_balance, s.low_balance)::text AS low_balance,
              COALESCE(c.below_low_balance, false) AS below_low_balance
       FROM wallets w
       LEFT JOIN wallet_policies c ON c.address = w.address AND c.chain_id = $1
       LEFT JOIN wallet_policies s ON s.address = w.address AND s.chain_id = '*'
       WHERE COALESCE(c.low_balance, s.low_balance) IS NOT NULL`,
      [chainId],
    );
    if (rows.length === 0) return 0;
    const answers = await this.chain.rpc.batch(rows.map((w) => ["eth_getBalance", [w.address, "latest"]]));
    let emitted = 0;
    for (const [i, wallet] of rows.entries()) {
      const answer = answers[i];
      if (!("result" in answer)) continue;
      const balance = BigInt(answer.result as string);
      if (balance < BigInt(wallet.low_balance) === wallet.below_low_balance) continue;
      await this.db.transaction(async (tx) => {
        if ((await balanceCrossing(tx, wallet.address, balance, chainId)) !== "fell-below") return;
        await emitEvent(tx, {
          type: "wallet.low_balance",
          data: {
            chainId,
            address: wallet.address,
            label: wallet.label,
            balance: balance.toString(),
            lowBalance: wallet.low_balance,
          },
          wallet: wallet.address,
        });
        emitted++;
      });
    }
    return emitted;
  }
}
