import type { AllowlistStore } from "./allowlist-store";
import type { DropsConfig } from "./one-transaction";
import type { VoucherStore } from "./voucher-store";

/** What one chain's drops have: the allowlists and vouchers the service keeps, and MAX_GAS_PER_TX. */
export interface DropsDeps extends DropsConfig {
  allowlists: AllowlistStore;
  vouchers: VoucherStore;
}
