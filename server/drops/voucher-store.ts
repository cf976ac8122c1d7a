import type { SqlDriver } from "../db";
import type { Voucher } from "./voucher";

export interface StoredVoucher extends Voucher {
  signer: string;
  signedBlock: number;
  createdAt: string;
}

/** The vouchers the service signed (migration 20), by collection and id. */
export class VoucherStore {
  constructor(
    private readonly db: SqlDriver,
    private readonly chainId: string,
  ) {}

  async save(collection: string, voucher: Voucher, signer: string, signedBlock: number): Promise<void> {
    await this.db.query(
      `INSERT INTO vouchers (chain_id, address, id, recipient, amount, price, valid_until, signer, signed_block)
       VALUES ($1, $2, $3, $4, $5::numeric, $6::numeric, $7, $8, $9)`,
      [
        this.chainId,
        collection.toLowerCase(),
        voucher.id.toLowerCase(),
        voucher.to,
        voucher.amount.toString(),
        voucher.price.toString(),
        voucher.validUntil.toString(),
        signer,
        signedBlock,
      ],
    );
  }

  async find(collection: string, id: string): Promise<StoredVoucher | undefined> {
    const { rows } = await this.db.query<{
      recipient: string;
      amount: string;
      price: string;
      valid_until: string;
      signer: string;
      signed_block: string;
      created_at: Date | string;
    }>(
      `SELECT recipient, amount::text, price::text, valid_until::text, signer, signed_block::text, created_at
       FROM vouchers WHERE chain_id = $1 AND address = $2 AND id = $3`,
      [this.chainId, collection.toLowerCase(), id.toLowerCase()],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      id: id.toLowerCase(),
      to: row.recipient,
      amount: BigInt(row.amount),
      price: BigInt(row.price),
      validUntil: BigInt(row.valid_until),
      signer: row.signer,
      signedBlock: Number(row.signed_block),
      createdAt: new Date(row.created_at).toISOString(),
    };
  }
}
