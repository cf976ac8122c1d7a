import { z } from "zod";
import type { RpcUrlState } from "../chain/rpc-failover";
import "./openapi";

/** What /health and GET /chains say of one chain. */
export interface ChainStatus {
  id: string;
  name: string;
  status: "ok" | "down";
  blockNumber?: number;
  finalizedBlock?: number;
  rpcUrls: RpcUrlState[];
}

export const RpcUrlStateView = z
  .object({
    url: z.string().openapi({ description: "Masked: no path key, no query value, no password" }),
    status: z.enum(["ok", "down", "behind"]),
    lastError: z.string().optional(),
    calls: z.number().int().optional(),
  })
  .openapi("RpcUrlState");

export const ChainStatusView = z
  .object({
    id: z.string().openapi({ example: "8453" }),
    name: z.string().openapi({ example: "base" }),
    status: z.enum(["ok", "down"]),
    blockNumber: z.number().int().optional().openapi({ description: "The chain's head, when it answers" }),
    finalizedBlock: z.number().int().optional(),
    rpcUrls: z.array(RpcUrlStateView).openapi({ description: "Each RPC URL, masked, with its state" }),
  })
  .openapi("ChainStatus");
