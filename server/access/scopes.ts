import { z } from "zod";
import "../http/openapi";

/** Everything an access key can be allowed to do (API.md, "Access keys"). */
export const SCOPES = [
  "nft:read",
  "nft:mint",
  "nft:mintForFree",
  "nft:configure",
  "nft:withdraw",
  "nft:deploy",
  "nft:vouchers",
  "wallets:read",
  "wallets:manage",
  "webhooks:manage",
  "access-keys:manage",
  "metrics:read",
  "approvals:decide",
] as const;

export type Scope = (typeof SCOPES)[number];

export const ScopeSchema = z.enum(SCOPES).openapi({ example: "nft:mint" });
