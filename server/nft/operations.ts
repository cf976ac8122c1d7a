import type Router from "@koa/router";
import { z } from "zod";
import { OperationView, operationView } from "../engine";
import { ApiError } from "../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../http/openapi";
import type { NftDeps } from "./route";

const OperationParams = z.object({
  operationId: z.string().openapi({ example: "6f1c1a52-5d0e-4a59-9d67-2f0f5a0c8e11" }),
});

/** GET /nft/operations/{operationId}: where a write stands, also after its request was answered. */
export function mountOperationRoute(router: Router, deps: NftDeps): void {
  router.get("/nft/operations/:operationId", async (ctx) => {
    const op = await deps.engine.find(ctx.params.operationId);
    if (!op) throw new ApiError("OPERATION_NOT_FOUND", `No operation ${ctx.params.operationId.slice(0, 80)}`);
    ctx.body = operationView(op);
  });
}

export function registerOperationOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/nft/operations/{operationId}",
    operationId: "getOperation",
    tags: ["nft"],
    summary: "An operation: a write's status, transactions, result or error",
    request: { params: OperationParams },
    responses: {
      200: { description: "The operation", content: { "application/json": { schema: OperationView } } },
      404: errorResponse("OPERATION_NOT_FOUND"),
    },
  });
}
