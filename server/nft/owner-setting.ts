import { z } from "zod";
import type { ChainClient } from "../chain/chain-client";
import { collectionInterface } from "../chain/collection";
import { ApiError, type ErrorCode } from "../http/errors";
import { writeResponseSchema, writeResult, type NftResult } from "./route";

/** What an owner-only setter can answer besides validation and chain errors. */
export const OWNER_SETTING_ERRORS: ErrorCode[] = [
  "INSUFFICIENT_FUNDS",
  "NOT_CONTRACT_OWNER",
  "CONTRACT_NOT_FOUND",
  "UNSUPPORTED_CONTRACT",
  "CONTRACT_REVERTED",
];

/** A setter's response: the write fields are absent when nothing changed and nothing was sent. */
export function settingResponseSchema(extra: z.ZodRawShape) {
  return writeResponseSchema({ ...extra, changed: z.boolean() }).partial({
    status: true,
    transactionHash: true,
    blockNumber: true,
    from: true,
    contractAddress: true,
    gasUsed: true,
  });
}

export interface Setting {
  privateKey: string;
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
export async function applySetting(chain: ChainClient, setting: Setting): Promise<NftResult> {
  const { contractAddress } = setting;
  const signer = chain.signers.get(setting.privateKey);
  const [current, owner] = await chain.read(contractAddress, () =>
    Promise.all([chain.view(contractAddress, ...setting.read), chain.view<string>(contractAddress, "owner")]),
  );
  if (owner.toLowerCase() !== signer.address.toLowerCase()) {
    throw new ApiError("NOT_CONTRACT_OWNER", `OwnableUnauthorizedAccount(account=${signer.address})`);
  }
  if (setting.isCurrent(current)) return { body: { ...setting.fields, changed: false } };
  const [method, args] = setting.call;
  const outcome = await chain.write({
    signer,
    to: contractAddress,
    data: collectionInterface().encodeFunctionData(method, args),
  });
  return writeResult(outcome, signer, contractAddress, () => ({ ...setting.fields, changed: true }));
}
