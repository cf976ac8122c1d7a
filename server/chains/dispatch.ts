import type Router from "@koa/router";
import type { Context, Middleware } from "koa";
import { ApiError } from "../http/errors";
import { readJsonBody } from "../http/json-body";
import type { AccessControl, AccessDeclaration } from "../access";
import type { ChainRegistry, RegisteredChain } from "./registry";

/** The largest body a dispatched route reads (POST /jobs): the chain is read from it before the route reads it again. */
const LARGEST_BODY = "10mb";

/**
 * Routes a request under `prefixes` to its chain's router, built once per chain by `build`: the
 * chain `?chain=` names, else the only chain, else the JSON body's `chain`. With several chains, a
 * request for which `withoutChain` answers a unit goes there (a job by id: any chain's router reads
 * the shared store); else one that names none is 400 CHAIN_REQUIRED.
 *
 * The order is the access keys' (API.md, "Chains"): the key is admitted first (`admitFirst`'s
 * declaration; without one, a presented key is authenticated), then the chain is resolved and
 * checked against the key's chains, and only then is a body read (the chain it names is checked
 * before the route sees it). So 401 and a chain's 403 come before a byte of the body is read.
 */
export function chainDispatcher<Unit extends RegisteredChain>(
  chains: ChainRegistry<Unit>,
  prefixes: string[],
  build: (unit: Unit) => Router,
  options: {
    /** Unset: no key is admitted here (a public route, whose chain is its path's). */
    access?: AccessControl;
    withoutChain?: (ctx: Context) => Unit | undefined;
    /**
     * What the request needs of its key before its chain is resolved (a list: any one of them, as
     * a job's write takes either kind's scope); unset = a key if one is presented.
     */
    admitFirst?: (ctx: Context) => AccessDeclaration | readonly AccessDeclaration[] | undefined;
  },
): { middleware: Middleware; matcher: Router } {
  const built = new Map(chains.units.map((unit) => [unit, build(unit)]));
  const routers = new Map([...built].map(([unit, router]) => [unit, router.routes()]));
  const { access } = options;
  const middleware: Middleware = async (ctx, next) => {
    if (!prefixes.some((prefix) => ctx.path === prefix || ctx.path.startsWith(`${prefix}/`))) return next();
    if (access) await admitAny(access, ctx, options.admitFirst?.(ctx) ?? ANY_KEY);
    const unit = await unitOf(ctx, chains, options.withoutChain);
    access?.checkChain(ctx, unit);
    await routers.get(unit)!(ctx as Parameters<ReturnType<Router["routes"]>>[0], next);
  };
  return { middleware, matcher: built.get(chains.units[0])! };
}

/** Authenticates a key that is presented (401 for a bad one); none needed unless REQUIRE_ACCESS_KEY=true. */
const ANY_KEY: AccessDeclaration = { key: "open" };

/** Admits the request under the first declaration its key meets; a 403 only when it meets none (the last one's). */
async function admitAny(
  access: AccessControl,
  ctx: Context,
  declarations: AccessDeclaration | readonly AccessDeclaration[],
): Promise<void> {
  const list: readonly AccessDeclaration[] = Array.isArray(declarations) ? declarations : [declarations];
  for (const [i, declaration] of list.entries()) {
    try {
      await access.admit(ctx, declaration);
      return;
    } catch (err) {
      if (i === list.length - 1 || !(err instanceof ApiError && err.code === "FORBIDDEN")) throw err;
    }
  }
}

async function unitOf<Unit extends RegisteredChain>(
  ctx: Context,
  chains: ChainRegistry<Unit>,
  withoutChain: ((ctx: Context) => Unit | undefined) | undefined,
): Promise<Unit> {
  const named = Array.isArray(ctx.query.chain) ? ctx.query.chain[0] : ctx.query.chain;
  if (named !== undefined && named !== "") return chains.resolve(named);
  if (chains.only) return chains.only;
  const fallback = withoutChain?.(ctx);
  if (fallback) return fallback;
  if (ctx.method === "GET" || ctx.method === "HEAD" || ctx.method === "DELETE" || !ctx.request.is("json"))
    return chains.resolve(undefined);
  const body = await readJsonBody(ctx, LARGEST_BODY);
  const chain = typeof body === "object" && body !== null ? (body as Record<string, unknown>).chain : undefined;
  return chains.resolve(chain);
}
