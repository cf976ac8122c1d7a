import { lookup as dnsLookup } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { ApiError } from "../http/errors";

/** Cloud metadata services: refused whatever WEBHOOK_ALLOW_PRIVATE says. */
const METADATA_ADDRESSES = new Set([
  "169.254.169.254", // AWS, GCP, Azure, OpenStack, …
  "fd00:ec2::254", // AWS over IPv6
  "100.100.100.200", // Alibaba Cloud
  "168.63.129.16", // Azure's wire server
]);

/** Ranges WEBHOOK_ALLOW_PRIVATE=true opens (ipaddr.js range names); link-local and metadata stay shut. */
const PRIVATE_RANGES = new Set(["loopback", "private", "uniqueLocal", "carrierGradeNat"]);

/** Resolves a host name to every address it has (dns.lookup with all: true, by default). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

/** A webhook address the guard refuses: the reason names the range, never anything secret. */
export class ForbiddenAddress extends Error {
  readonly code = "WEBHOOK_URL_FORBIDDEN";
}

/**
 * The SSRF guard of webhook URLs. Only globally routable unicast addresses pass (and, with
 * `allowPrivate`, loopback and private ones); it is applied when a URL is stored, and again on
 * the address each delivery actually connects to (`lookup` of the delivery agents), so a name
 * that resolves elsewhere later (DNS rebinding) cannot pass.
 */
export class UrlGuard {
  constructor(
    private readonly allowPrivate: boolean,
    private readonly resolver: Resolver = systemResolver,
  ) {}

  /** Why `address` is refused, or null when it may be connected to (for the delivery log: it names the address). */
  refusal(address: string): string | null {
    const why = this.rule(address);
    if (!why) return null;
    if (why.range === "invalid") return `${address} is not an IP address`;
    if (why.range === "metadata") return `${why.address} is a cloud metadata address`;
    return `${why.address} is in a ${why.range} range`;
  }

  /**
   * The range that refuses `address` (ipaddr.js's names, or "metadata", "invalid"), or null. An
   * IPv4 address inside an IPv6 one (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d) is judged as that IPv4.
   */
  private rule(address: string): { range: string; address: string } | null {
    if (!ipaddr.isValid(address)) return { range: "invalid", address };
    let ip = ipaddr.parse(address);
    if (ip.kind() === "ipv6") {
      const v6 = ip as ipaddr.IPv6;
      const compatible = v6.parts.slice(0, 6).every((p) => p === 0) && (v6.parts[6] !== 0 || v6.parts[7] > 1);
      if (v6.isIPv4MappedAddress()) ip = v6.toIPv4Address();
      else if (compatible) ip = ipaddr.fromByteArray(v6.toByteArray().slice(12));
    }
    const normal = ip.toString();
    if (METADATA_ADDRESSES.has(normal)) return { range: "metadata", address: normal };
    const range = ip.range();
    if (range === "unicast" || (this.allowPrivate && PRIVATE_RANGES.has(range))) return null;
    return { range, address: normal };
  }

  /**
   * For a URL about to be stored: 400 WEBHOOK_URL_FORBIDDEN when the host is, or resolves to, an
   * address the guard refuses, naming the rule broken (never the address a name resolved to) and
   * the setting that opens what it can; 400 VALIDATION_ERROR when it is not http(s), does not
   * resolve, or its credentials would not decode.
   */
  async checkUrl(url: string): Promise<void> {
    const host = hostOf(url);
    const addresses = isIP(host) ? [{ address: host }] : await this.resolver(host).catch(() => null);
    if (!addresses) {
      throw new ApiError("VALIDATION_ERROR", `The host of url does not resolve: ${host}`, [
        { path: "url", message: "host does not resolve" },
      ]);
    }
    for (const { address } of addresses) {
      const why = this.rule(address);
      if (!why) continue;
      const what = why.range === "metadata" ? "cloud metadata" : why.range;
      const setting = PRIVATE_RANGES.has(why.range)
        ? "WEBHOOK_ALLOW_PRIVATE=true opens loopback and private addresses, for local development"
        : "no setting opens them (WEBHOOK_ALLOW_PRIVATE=true opens loopback and private addresses only)";
      throw new ApiError(
        "WEBHOOK_URL_FORBIDDEN",
        `Webhook URLs may not reach ${what} addresses, and the host of url is or resolves to one: ${setting}`,
        [{ path: "url", message: `${what} address` }],
      );
    }
  }

  /** Throws ForbiddenAddress for a URL whose host is an IP literal the guard refuses (no lookup happens for those). */
  checkLiteral(url: URL): void {
    const host = bare(url.hostname);
    if (!isIP(host)) return;
    const why = this.refusal(host);
    if (why) throw new ForbiddenAddress(why);
  }

  /**
   * The `lookup` of the delivery agents: resolves, refuses the connection when any address is
   * forbidden, else answers in the form net.connect asked for (one address, or all of them).
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.resolver(hostname).then(
      (addresses) => {
        const wanted = options.family ? addresses.filter((a) => a.family === options.family) : addresses;
        for (const { address } of addresses) {
          const why = this.refusal(address);
          if (why) return callback(new ForbiddenAddress(why), "", 0);
        }
        if (wanted.length === 0) {
          const err = Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" });
          return callback(err, "", 0);
        }
        if (options.all) return callback(null, wanted);
        callback(null, wanted[0].address, wanted[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
}

function bare(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

/** The host of an http(s) URL (IPv6 without brackets), or 400 VALIDATION_ERROR. */
function hostOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ApiError("VALIDATION_ERROR", "url is not a valid URL", [{ path: "url", message: "invalid URL" }]);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ApiError("VALIDATION_ERROR", "url must be http:// or https://", [
      { path: "url", message: "must be http or https" },
    ]);
  }
  try {
    // The sender sends them as Basic authorization, decoded.
    decodeURIComponent(parsed.username);
    decodeURIComponent(parsed.password);
  } catch {
    throw new ApiError("VALIDATION_ERROR", "url's user or password is not valid percent-encoding", [
      { path: "url", message: "malformed percent-encoding in the user or password" },
    ]);
  }
  return bare(parsed.hostname);
}
