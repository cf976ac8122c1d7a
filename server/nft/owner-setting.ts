import type { ChainClient } from "../chain/chain-client";
import { collectionInterface } from "../chain/collection";
import type { PooledSigner } from "../chain/signer-pool";
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
  /** The view that reads the current value, e.g. ["paused", []]. */
  read: [method: string, args: readonly unknown[]];
  /** Whether the value read is already the one asked for. */
  isCurrent(value: unknown): boolean;
  /** The owner-only call that changes it, e.g. ["setPaused", [true]]. */
  call: [method: string, args: readonly unknown[]];
  /** The response fields of the setting, beyond `changed` and the write fields. */
  fields: Record<string, unknown>;
}

/**
 * An owner-only setting that is only sent when it changes something. A no-op sends nothing, so
 * the contract cannot refuse it: ownership is checked here, so that another key still gets
 * 403 NOT_CONTRACT_OWNER, as it would for a real change.
 */
export async function planSetting(chain: ChainClient, signer: PooledSigner, setting: Setting): Promise<WritePlan> {
  const { contractAddress } = setting;
  const [current, owner] = await chain.read(contractAddress, () =>
    Promise.all([chain.view(contractAddress, ...setting.read), chain.view<string>(contractAddress, "owner")]),
  );
  if (owner.toLowerCase() !== signer.address.toLowerCase()) {
    throw new ApiError("NOT_CONTRACT_OWNER", `OwnableUnauthorizedAccount(account=${signer.address})`);
  }
  if (setting.isCurrent(current)) return { unchanged: setting.fields, contractAddress };
  const [method, args] = setting.call;
  return {
    call: { to: contractAddress, data: collectionInterface().encodeFunctionData(method, args) },
    context: setting.fields,
  };
}

/** A setting's success fields: what it set, and that it changed. */
export const settingResult = (_receipt: unknown, op: { context: Record<string, unknown> }) => ({
  ...op.context,
  changed: true,
});
