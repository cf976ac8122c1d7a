import type Router from "@koa/router";
import { z } from "zod";
import type { RpcUrlState } from "../chain/rpc-failover";
import type { Rpc } from "../chain/rpc";
import type { AccessControl, AccessDeclaration } from "../access";
import { errorResponse, type OpenAPIRegistry } from "../http/openapi";
import type { ChainClient } from "../chain/chain-client";
import { ChainStatusView, type ChainStatus } from "../http/chain-status-views";
import type { ChainRegistry, RegisteredChain } from "./registry";

/** What /health and GET /chains read of a chain's unit. */
export interface StatusChain extends RegisteredChain {
  readonly client: ChainClient;
  /** Each RPC URL's state (the failover transport's); unset for the embedded chain. */
  readonly rpcUrls?: () => RpcUrlState[];
}

/**
 * Every chain asked at once, each on its own: a chain that does not answer is `down` and holds
 * the others up no longer than its own RPC timeout.
 */
export async function chainStatuses(chains: ChainRegistry<StatusChain>, withFinalized = false): Promise<ChainStatus[]> {
  return Promise.all(
    chains.units.map(async (unit) => {
      const [head, finalized] = await Promise.allSettled([
        unit.client.ping(),
        withFinalized ? finalizedBlock(unit.client.rpc) : Promise.resolve(undefined),
      ]);
      const up = head.status === "fulfilled";
      return {
        id: unit.id,
        name: unit.name,
        status: up ? "ok" : "down",
        ...(up ? { blockNumber: head.value } : {}),
        ...(finalized.status === "fulfilled" && finalized.value !== undefined
          ? { finalizedBlock: finalized.value }
          : {}),
        rpcUrls: unit.rpcUrls?.() ?? [],
      } satisfies ChainStatus;
    }),
  );
}

async function finalizedBlock(rpc: Rpc): Promise<number | undefined> {
  const block = await rpc.call<{ number: string } | null>("eth_getBlockByNumber", ["finalized", false]);
  return block ? Number(BigInt(block.number)) : undefined;
}

/** Any valid key, and one is needed only where REQUIRE_ACCESS_KEY=true (API.md, "Chains"). */
const CHAINS_ACCESS: AccessDeclaration = { key: "open" };

/** GET /chains: the configured chains, each with its head, finalized block and URLs (masked). */
export function mountChainsRoute(router: Router, chains: ChainRegistry<StatusChain>, access: AccessControl): void {
  router.get("/chains", access.require(CHAINS_ACCESS), async (ctx) => {
    ctx.body = { chains: await chainStatuses(chains, true) };
  });
}

export function registerChainsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/chains",
    operationId: "listChains",
    tags: ["service"],
    summary: "The configured chains: id, name, head, finalized block, each RPC URL (masked) with its state",
    security: [{}, { AccessKey: [] }],
    responses: {
      200: {
        description: "Every configured chain",
        content: { "application/json": { schema: z.object({ chains: z.array(ChainStatusView) }) } },
      },
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      429: errorResponse("RATE_LIMITED"),
    },
  });
}
