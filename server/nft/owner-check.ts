import { ApiError } from "../http/errors";

/**
 * A no-op write sends nothing, so the contract cannot refuse it: check ownership here so that
 * another key still gets 403 NOT_CONTRACT_OWNER, as it would for a real change.
 */
export function assertOwner(owner: string, caller: string): void {
  if (owner.toLowerCase() !== caller.toLowerCase()) {
    throw new ApiError("NOT_CONTRACT_OWNER", `OwnableUnauthorizedAccount(account=${caller})`);
  }
}
