import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** How long a plan may be committed (API.md, "MCP"). */
export const PLAN_TTL_MS = 10 * 60_000;

/** What a plan token binds: the key that planned, the tool, and the exact arguments. */
export interface PlanBinding {
  /** The presented access key (only its hash enters the token). */
  key: string;
  tool: string;
  args: Record<string, unknown>;
}

export type PlanCheck =
  { ok: true } | { ok: false; code: "PLAN_TOKEN_EXPIRED" | "PLAN_TOKEN_MISMATCH"; message: string };

/**
 * Plan tokens: `p1.<expiry, base36 seconds>.<HMAC>`, an HMAC over the expiry, the key's hash, the
 * tool and the hash of the arguments in canonical JSON. Nothing is stored: any instance holding
 * the same secret checks it. Short, visible ASCII: the token is also the write's Idempotency-Key.
 */
export class PlanTokens {
  constructor(
    private readonly secret: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  issue(binding: PlanBinding): { planToken: string; expiresAt: string } {
    const expiry = Math.ceil((this.now() + PLAN_TTL_MS) / 1000).toString(36);
    return {
      planToken: `p1.${expiry}.${this.mac(expiry, binding)}`,
      expiresAt: new Date(parseInt(expiry, 36) * 1000).toISOString(),
    };
  }

  check(token: string, binding: PlanBinding): PlanCheck {
    const [version, expiry, mac] = token.split(".");
    const given = Buffer.from(mac ?? "", "base64url");
    const expected = version === "p1" && expiry ? Buffer.from(this.mac(expiry, binding), "base64url") : undefined;
    if (!expected || given.length !== expected.length || !timingSafeEqual(given, expected))
      return {
        ok: false,
        code: "PLAN_TOKEN_MISMATCH",
        message:
          "This planToken was not made for these arguments, this tool and this key: nothing was sent. Call the tool without planToken to plan these arguments",
      };
    if (parseInt(expiry, 36) * 1000 <= this.now())
      return { ok: false, code: "PLAN_TOKEN_EXPIRED", message: "This planToken is past its 10 minutes: plan again" };
    return { ok: true };
  }

  private mac(expiry: string, { key, tool, args }: PlanBinding): string {
    const keyHash = createHash("sha256").update(key).digest("hex");
    const argsHash = createHash("sha256").update(canonicalJson(args)).digest("hex");
    return createHmac("sha256", this.secret).update(`${expiry}\n${keyHash}\n${tool}\n${argsHash}`).digest("base64url");
  }
}

/** JSON with object keys sorted at every depth: one text for one value, whatever the key order sent. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(value);
}
