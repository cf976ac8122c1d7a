import { ApiError } from "../http/errors";

/** What the registry knows of a unit: how a request names it. What else a unit has is its users' business. */
export interface RegisteredChain {
  /** The chain id as a decimal string. */
  readonly id: string;
  readonly name: string;
}

/** A chain's value in a request: its id (a number or a decimal string) or its name. */
export type ChainName = string | number;

/**
 * The configured chains, by id and by name: routes look the chain of a request up here, once.
 * With one chain configured a request may leave the chain out; with several it must name one.
 */
export class ChainRegistry<Unit extends RegisteredChain = RegisteredChain> {
  private readonly byKey = new Map<string, Unit>();

  constructor(readonly units: readonly Unit[]) {
    if (units.length === 0) throw new Error("no chain configured");
    for (const unit of units) {
      this.byKey.set(unit.id, unit);
      this.byKey.set(unit.name, unit);
    }
  }

  /** The one chain, when only one is configured. */
  get only(): Unit | undefined {
    return this.units.length === 1 ? this.units[0] : undefined;
  }

  /** The unit a name or id names (a number, a decimal string or a name), or undefined. */
  find(chain: unknown): Unit | undefined {
    if (typeof chain === "number" && Number.isSafeInteger(chain)) return this.byKey.get(String(chain));
    if (typeof chain !== "string") return undefined;
    const key = /^\d+$/.test(chain) ? BigInt(chain).toString() : chain;
    return this.byKey.get(key);
  }

  /**
   * The unit a request names: 404 CHAIN_NOT_FOUND for a chain not configured; left out, the one
   * chain, or 400 CHAIN_REQUIRED with several (nothing is sent to a chain the caller did not name).
   */
  resolve(chain: unknown): Unit {
    if (chain === undefined || chain === null || chain === "") {
      const only = this.only;
      if (only) return only;
      throw new ApiError(
        "CHAIN_REQUIRED",
        `Several chains are configured (${this.units.map((u) => u.name).join(", ")}): name one with "chain"`,
      );
    }
    const unit = this.find(chain);
    if (!unit) {
      const shown = typeof chain === "string" || typeof chain === "number" ? String(chain).slice(0, 80) : typeof chain;
      throw new ApiError(
        "CHAIN_NOT_FOUND",
        `No chain ${shown} is configured; the chains are ${this.units.map((u) => `${u.name} (${u.id})`).join(", ")}`,
      );
    }
    return unit;
  }
}
