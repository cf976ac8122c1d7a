import type { ChainClient } from "../chain/chain-client";
import type { TransactionSigner } from "../signers/signer";
import { ApiError, type ErrorCode } from "../http/errors";
import type { WritePlan } from "./route";

/** What an owner-only setter can answer besides validation and chain errors. */
export const OWNER_SETTING_ERRORS: ErrorCode[] = [
  "INSUFFICIENT_FUNDS",
  "NOT_CONTRACT_OWNER",
  "CONTRACT_NOT_FOUND",
  "UNSUPPORTED_CONTRACT",
  "CONTRACT_REVERTED",
];

export interface Setting {
  contractAddress: string;
  /** Whether the collection already has the value asked for (a typed view call). */
  isCurrent(): Promise<boolean>;
  /** The owner-only call that changes it (typed calldata). */
  data: string;
  /** The response fields of the setting, beyond `changed` and the write fields. */
  fields: Record<string, unknown>;
}

/**
 * An owner-only setting that is only sent when it changes something. A no-op sends nothing, so
 * the contract cannot refuse it: ownership is checked here, so that another key still gets
 * 403 NOT_CONTRACT_OWNER, as it would for a real change.
 */
export async function planSetting(chain: ChainClient, signer: TransactionSigner, setting: Setting): Promise<WritePlan> {
  const { contractAddress } = setting;
  const current = await chain.read(contractAddress, () => setting.isCurrent());
  // A change is simulated, which refuses another caller (NOT_CONTRACT_OWNER) with no read of its
  // own; a setting already in force sends nothing, so only there is the owner read.
  if (!current) return { call: { to: contractAddress, data: setting.data }, context: setting.fields };
  await checkOwner(chain, contractAddress, signer);
  return { unchanged: setting.fields, contractAddress };
}

/** 403 NOT_CONTRACT_OWNER unless `signer` owns the collection: one view call, before any costly work. */
export async function checkOwner(
  chain: ChainClient,
  contractAddress: string,
  signer: TransactionSigner,
): Promise<void> {
  requireOwner(
    contractAddress,
    await chain.read(contractAddress, () => chain.view(contractAddress, "owner", [])),
    signer,
  );
}

function requireOwner(contractAddress: string, owner: string, signer: TransactionSigner): void {
  if (owner.toLowerCase() !== signer.address.toLowerCase()) {
    throw new ApiError(
      "NOT_CONTRACT_OWNER",
      `Only the owner of collection ${contractAddress}, ${owner}, may do this; the caller is ${signer.address}`,
    );
  }
}

/** A setting's success fields: what it set, and that it changed. */
export const settingResult = (_receipt: unknown, op: { context: Record<string, unknown> }) => ({
  ...op.context,
  changed: true,
});
