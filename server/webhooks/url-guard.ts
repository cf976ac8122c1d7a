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

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (dns.lookup with all: true, by default). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

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

  /** Why `address` is refused, or null when it may be connected to. */
  refusal(address: string): string | null {
    if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
    let ip = ipaddr.parse(address);
    if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
    const normal = ip.toString();
    if (METADATA_ADDRESSES.has(normal)) return `${normal} is a cloud metadata address`;
    const range = ip.range();
    if (range === "unicast") return null;
    if (this.allowPrivate && PRIVATE_RANGES.has(range)) return null;
    return `${normal} is in a ${range} range`;
  }

  /**
   * For a URL about to be stored: 400 WEBHOOK_URL_FORBIDDEN when the host is, or resolves to, an
   * address the guard refuses; 400 VALIDATION_ERROR when it is not http(s) or does not resolve.
   */
  async checkUrl(url: string): Promise<void> {
    const host = hostOf(url);
    let addresses: string[];
    if (isIP(host)) {
      addresses = [host];
    } else {
      try {
        addresses = (await this.resolver(host)).map((a) => a.address);
      } catch {
        throw new ApiError("VALIDATION_ERROR", `The host of url does not resolve: ${host}`, [
          { path: "url", message: "host does not resolve" },
        ]);
      }
    }
    for (const address of addresses) {
      const why = this.refusal(address);
      if (why) {
        throw new ApiError("WEBHOOK_URL_FORBIDDEN", `Webhook URLs may not reach this address: ${why}`, [
          { path: "url", message: why },
        ]);
      }
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
export function hostOf(url: string): string {
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
  return bare(parsed.hostname);
}
