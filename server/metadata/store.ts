/** Hosted metadata in SQL (migration 26): each collection's documents, placeholder and commit state. */
import type { SqlDriver, SqlExecutor } from "../db";
import { ApiError } from "../http/errors";
import type { MetadataUpload } from "./documents";

export interface MetadataRecord {
  placeholder: string | null;
  frozen: boolean;
  provenance: string | null;
  count: number | null;
  operationId: string | null;
  startingIndex: bigint | null;
  rootCid: string | null;
  /** Documents stored. */
  documents: number;
}

interface RecordRow {
  placeholder: string | null;
  frozen: boolean;
  provenance: string | null;
  count: number | null;
  operation_id: string | null;
  starting_index: string | null;
  root_cid: string | null;
  documents: string | number;
}

export class MetadataStore {
  constructor(readonly db: SqlDriver) {}

  /**
   * Stores an upload in one transaction: the placeholder if given, and each token's document
   * (replacing what that token had). 409 METADATA_FROZEN once the provenance is committed.
   */
  async put(chainId: string, address: string, upload: MetadataUpload): Promise<number> {
    const at = address.toLowerCase();
    return this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO metadata_collections (chain_id, address) VALUES ($1, $2) ON CONFLICT (chain_id, address) DO NOTHING`,
        [chainId, at],
      );
      const { rows } = await tx.query<{ frozen: boolean }>(
        "SELECT frozen FROM metadata_collections WHERE chain_id = $1 AND address = $2 FOR UPDATE",
        [chainId, at],
      );
      if (rows[0]?.frozen) throw frozen(address);
      if (upload.placeholder !== undefined)
        await tx.query("UPDATE metadata_collections SET placeholder = $3 WHERE chain_id = $1 AND address = $2", [
          chainId,
          at,
          upload.placeholder,
        ]);
      if (upload.tokens.length > 0)
        await tx.query(
          `INSERT INTO metadata_documents (chain_id, address, token_id, document)
           SELECT $1, $2, t, d FROM json_to_recordset($3::json) AS x(t bigint, d text)
           ON CONFLICT (chain_id, address, token_id) DO UPDATE SET document = EXCLUDED.document`,
          [chainId, at, JSON.stringify(upload.tokens.map((t) => ({ t: t.tokenId.toString(), d: t.document })))],
        );
      await tx.query(
        "UPDATE metadata_collections SET root_cid = NULL, updated_at = now() WHERE chain_id = $1 AND address = $2",
        [chainId, at],
      );
      return count(tx, chainId, at);
    });
  }

  /** The collection's metadata state; null when nothing was ever uploaded. */
  async find(chainId: string, address: string, db: SqlExecutor = this.db): Promise<MetadataRecord | null> {
    const { rows } = await db.query<RecordRow>(
      `SELECT placeholder, frozen, provenance, count, operation_id, starting_index::text AS starting_index, root_cid,
         (SELECT count(*) FROM metadata_documents d WHERE d.chain_id = m.chain_id AND d.address = m.address) AS documents
       FROM metadata_collections m WHERE chain_id = $1 AND address = $2`,
      [chainId, address.toLowerCase()],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      placeholder: row.placeholder,
      frozen: row.frozen,
      provenance: row.provenance,
      count: row.count === null ? null : Number(row.count),
      operationId: row.operation_id,
      startingIndex: row.starting_index === null ? null : BigInt(row.starting_index),
      rootCid: row.root_cid,
      documents: Number(row.documents),
    };
  }

  /**
   * A fingerprint of what a served collection depends on in the store: its row (an upload, a commit,
   * the reveal recorded, the CAR's root) and the ERC-4906 events the index read of it. Any instance
   * may have written them; another compares it with the one it loaded with to know its copy is stale.
   */
  async version(chainId: string, address: string): Promise<string> {
    const { rows } = await this.db.query<{ row: string | null; events: string }>(
      `SELECT
         (SELECT updated_at::text || '|' || coalesce(starting_index::text, '') || '|' || coalesce(root_cid, '')
            FROM metadata_collections WHERE chain_id = $1 AND address = $2) AS row,
         (SELECT count(*)::text || '|' || coalesce(max(u.block_number)::text, '')
            FROM index_metadata_updates u JOIN indexed_collections c ON c.id = u.collection_id
            WHERE c.chain_id = $1 AND c.address = $2) AS events`,
      [chainId, address.toLowerCase()],
    );
    return `${rows[0].row ?? ""}#${rows[0].events}`;
  }

  /** Documents by token id, from `after` on, at most `limit`. */
  async page(
    chainId: string,
    address: string,
    after: bigint,
    limit: number,
  ): Promise<Array<{ tokenId: bigint; document: string }>> {
    const { rows } = await this.db.query<{ token_id: string; document: string }>(
      `SELECT token_id::text AS token_id, document FROM metadata_documents
       WHERE chain_id = $1 AND address = $2 AND token_id > $3 ORDER BY token_id LIMIT $4`,
      [chainId, address.toLowerCase(), after.toString(), limit],
    );
    return rows.map((row) => ({ tokenId: BigInt(row.token_id), document: row.document }));
  }

  /** Every document, by token id (the served cache, the provenance, the CAR). */
  async documents(chainId: string, address: string, db: SqlExecutor = this.db): Promise<Map<bigint, string>> {
    const { rows } = await db.query<{ token_id: string; document: string }>(
      `SELECT token_id::text AS token_id, document FROM metadata_documents
       WHERE chain_id = $1 AND address = $2 ORDER BY token_id`,
      [chainId, address.toLowerCase()],
    );
    return new Map(rows.map((row) => [BigInt(row.token_id), row.document]));
  }

  /**
   * Freezes the documents for a commit, in one transaction with reading them: `compute` gets them
   * (ids 1..count) and answers the provenance, which is kept. A collection frozen already keeps its
   * provenance (a commit sent again); `compute` is then not called.
   */
  async freeze(
    chainId: string,
    address: string,
    compute: (documents: Map<bigint, string>) => { provenance: string; count: number },
  ): Promise<{ provenance: string; count: number }> {
    const at = address.toLowerCase();
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ frozen: boolean; provenance: string | null; count: number | null }>(
        "SELECT frozen, provenance, count FROM metadata_collections WHERE chain_id = $1 AND address = $2 FOR UPDATE",
        [chainId, at],
      );
      const row = rows[0];
      if (row?.frozen && row.provenance !== null && row.count !== null)
        return { provenance: row.provenance, count: Number(row.count) };
      const result = compute(await this.documents(chainId, at, tx));
      await tx.query(
        `UPDATE metadata_collections SET frozen = true, provenance = $3, count = $4, updated_at = now()
         WHERE chain_id = $1 AND address = $2`,
        [chainId, at, result.provenance, result.count],
      );
      return result;
    });
  }

  /** Undoes a freeze whose commit sent nothing (refused before broadcast): the documents may change again. */
  async unfreeze(chainId: string, address: string): Promise<void> {
    await this.db.query(
      `UPDATE metadata_collections SET frozen = false, provenance = NULL, count = NULL, operation_id = NULL,
         updated_at = now() WHERE chain_id = $1 AND address = $2`,
      [chainId, address.toLowerCase()],
    );
  }

  async setOperation(chainId: string, address: string, operationId: string): Promise<void> {
    await this.db.query("UPDATE metadata_collections SET operation_id = $3 WHERE chain_id = $1 AND address = $2", [
      chainId,
      address.toLowerCase(),
      operationId,
    ]);
  }

  /** Records what the chain says once revealed (the provenance the chain holds included). */
  async setRevealed(chainId: string, address: string, startingIndex: bigint): Promise<void> {
    await this.db.query(
      "UPDATE metadata_collections SET starting_index = $3, frozen = true WHERE chain_id = $1 AND address = $2",
      [chainId, address.toLowerCase(), startingIndex.toString()],
    );
  }

  async setRootCid(chainId: string, address: string, rootCid: string): Promise<void> {
    await this.db.query("UPDATE metadata_collections SET root_cid = $3 WHERE chain_id = $1 AND address = $2", [
      chainId,
      address.toLowerCase(),
      rootCid,
    ]);
  }
}

async function count(db: SqlExecutor, chainId: string, address: string): Promise<number> {
  const { rows } = await db.query<{ n: string | number }>(
    "SELECT count(*) AS n FROM metadata_documents WHERE chain_id = $1 AND address = $2",
    [chainId, address],
  );
  return Number(rows[0].n);
}

export function frozen(address: string): ApiError {
  return new ApiError(
    "METADATA_FROZEN",
    `The metadata of ${address} is committed (its provenance is set): its documents can no longer change`,
  );
}
