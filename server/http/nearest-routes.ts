import type Router from "@koa/router";

/** A route a listener serves: its method and its path template (`/wallets/{address}`). */
export interface KnownRoute {
  method: string;
  path: string;
}

/** The routes `routers` register, each once, in OpenAPI's form of a template; HEAD (every GET's twin) left out. */
export function knownRoutes(routers: Router[]): KnownRoute[] {
  const seen = new Map<string, KnownRoute>();
  for (const router of routers)
    for (const layer of router.stack) {
      if (typeof layer.path !== "string") continue;
      const path = layer.path.replace(/:(\w+)/g, "{$1}");
      for (const method of layer.methods) if (method !== "HEAD") seen.set(`${method} ${path}`, { method, path });
    }
  return [...seen.values()];
}

/**
 * The known routes nearest to what was asked, by edit distance over the path (a template's
 * `{param}` matches any one segment; case does not count), a route of the same method first:
 * `POST /nft/totalSupply` → `POST /nft/total-supply`. None when nothing is near.
 */
export function nearestRoutes(method: string, path: string, routes: KnownRoute[], most = 3): KnownRoute[] {
  const asked = path.toLowerCase().replace(/\/+$/, "") || "/";
  // Near: about a third of the path may differ (a typo, a camelCase for a kebab-case), no more.
  const limit = Math.max(2, Math.floor(asked.length / 3));
  // Another method costs half an edit: POST /nft/mint's typo is POST /nft/mint, not GET /nft/mint.
  const scored = routes
    .map((route) => ({ route, distance: pathDistance(asked, route.path.toLowerCase()) }))
    .filter(({ distance }) => distance <= limit)
    .map(({ route, distance }) => ({ route, score: distance * 2 + Number(route.method !== method) }))
    .sort((a, b) => a.score - b.score || a.route.path.localeCompare(b.route.path));
  const best = scored[0]?.score;
  // The closest ones only: a route two edits away is no suggestion beside one an edit away.
  return scored
    .filter(({ score }) => score === best)
    .slice(0, most)
    .map(({ route }) => route);
}

function pathDistance(asked: string, template: string): number {
  const a = asked.split("/");
  const t = template.split("/");
  if (a.length === t.length && t.some((segment) => /^\{\w+\}$/.test(segment)))
    return t.reduce(
      (sum, segment, i) => sum + (/^\{\w+\}$/.test(segment) && a[i] !== "" ? 0 : levenshtein(a[i], segment)),
      0,
    );
  return levenshtein(asked, template);
}

function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}
