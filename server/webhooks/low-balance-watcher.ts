import type { ChainClient } from "../chain/chain-client";
import type { SqlDriver } from "../db";
import type { Logger } from "../http/logger";
import { balanceCrossing } from "../wallets";
import { emitEvent } from "./events";

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
    private readonly chain: Pick<ChainClient, "rpc">,
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
    const { rows } = await this.db.query<WatchedRow>(
      `SELECT address, label, low_balance::text AS low_balance, below_low_balance
       FROM wallets WHERE low_balance IS NOT NULL`,
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
        if ((await balanceCrossing(tx, wallet.address, balance)) !== "fell-below") return;
        await emitEvent(tx, {
          type: "wallet.low_balance",
          data: {
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
