/** Approvals: writes a key's rule holds wait for a person's decision (API.md, "Approvals"). */
export {
  ApprovalDesk,
  approvalView,
  type ApprovalChain,
  type ApprovalDeskDeps,
  type HeldJobError,
  type HeldJobs,
  type HoldJobRequest,
  type HoldRequest,
} from "./desk";
export { JobApprovalPlan } from "./schemas";
export { ApprovalStore, type Approval, type ApprovalStatus } from "./approval-store";
export { createApprovalRouter, registerApprovalOpenApi } from "./routes";

/** APPROVAL_TTL_HOURS unset: a held write waits a day. */
export const DEFAULT_APPROVAL_TTL_HOURS = 24;
