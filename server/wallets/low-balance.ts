import type { SqlExecutor } from "../db";

/** How a wallet's balance stands against its `lowBalance` since it was last looked at. */
export type BalanceCrossing = "fell-below" | "recovered";

/**
 * Records `balance` against the wallet's `lowBalance` and says whether it crossed it: "fell-below"
 * once when it goes under (emit `wallet.low_balance` then, on the same `tx`), "recovered" once when
 * it is back at or above, null otherwise (no threshold, no wallet, or no crossing). One atomic
 * UPDATE: instances that see the same balance together report a crossing once between them.
 * Changing `lowBalance` (PATCH) re-arms it.
 */
export async function balanceCrossing(
  tx: SqlExecutor,
  address: string,
  balance: bigint,
): Promise<BalanceCrossing | null> {
  const { rows } = await tx.query<{ below_low_balance: boolean }>(
    `UPDATE wallets SET below_low_balance = ($2::numeric < low_balance)
     WHERE address = $1 AND low_balance IS NOT NULL AND below_low_balance <> ($2::numeric < low_balance)
     RETURNING below_low_balance`,
    [address, balance.toString()],
  );
  if (rows.length === 0) return null;
  return rows[0].below_low_balance ? "fell-below" : "recovered";
}
