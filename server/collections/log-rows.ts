import { copyText, isUniqueViolation, type CopyValue, type SqlExecutor } from "../db";

/** Where a stored log of the index came from, as the json_to_recordset rows of its inserts name it. */
export interface LogPlace {
  collectionId: number;
  blockNumber: number;
  logIndex: number;
  blockHash: string;
  transactionHash: string;
}

/**
 * One row of a json_to_recordset insert of an index log table: the columns every one shares (c, b,
 * i, h, t) and the table's own, `rest`. Object.assign, not a spread of the shared ones into a
 * literal: V8 copies a spread object slowly, 7 µs a row, 0.7 s of a 100,000-log backfill.
 */
export function logRow<T extends object>(
  log: LogPlace,
  rest: T,
): { c: number; b: number; i: number; h: string; t: string } & T {
  const place = { c: log.collectionId, b: log.blockNumber, i: log.logIndex, h: log.blockHash, t: log.transactionHash };
  return Object.assign(place, rest);
}

/** An index table that `insertNewRows` writes: its columns in order, each with its SQL type. */
export interface RowTable {
  name: string;
  /** Column name and SQL type (json_to_recordset's), in the order `values` gives them. */
  columns: readonly (readonly [name: string, type: string])[];
  /** How many of the first columns make a row's key (what a repeated log repeats). */
  keyColumns: number;
}

/**
 * Stores the rows not stored yet and answers the items they came from, in their order. COPY first,
 * under a savepoint: in a backfill each row of an INSERT cost about three of COPY, and COPY's rows
 * cost less to send than one JSON parameter. A row stored already (a node answering a log twice)
 * fails the COPY; then the careful way, INSERT … ON CONFLICT DO NOTHING, which names what it stored.
 */
export async function insertNewRows<T>(
  tx: SqlExecutor,
  table: RowTable,
  items: T[],
  values: (item: T) => CopyValue[],
): Promise<T[]> {
  if (items.length === 0) return [];
  const names = table.columns.map(([name]) => name);
  const rows = items.map(values);
  const savepoint = `insert_${table.name}`;
  await tx.query(`SAVEPOINT ${savepoint}`);
  try {
    await tx.copyFrom(table.name, names, copyText(rows));
    return items;
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    await tx.query(`ROLLBACK TO SAVEPOINT ${savepoint}`);
  }
  const fields = table.columns.map((_, i) => `x${i}`);
  const keys = names.slice(0, table.keyColumns).map((name, i) => `${name}::text AS k${i}`);
  const { rows: stored } = await tx.query<Record<string, string>>(
    `INSERT INTO ${table.name} (${names.join(", ")})
     SELECT ${fields.join(", ")} FROM json_to_recordset($1::json)
       AS x(${table.columns.map(([, type], i) => `${fields[i]} ${type}`).join(", ")})
     ON CONFLICT DO NOTHING RETURNING ${keys.join(", ")}`,
    [
      JSON.stringify(
        rows.map((row) =>
          Object.fromEntries(row.map((value, i) => [fields[i], typeof value === "bigint" ? String(value) : value])),
        ),
      ),
    ],
  );
  const keyOf = (row: readonly unknown[]) => row.slice(0, table.keyColumns).map(String).join(":");
  const inserted = new Set(stored.map((r) => Array.from({ length: table.keyColumns }, (_, i) => r[`k${i}`]).join(":")));
  return items.filter((_, i) => inserted.has(keyOf(rows[i])));
}
