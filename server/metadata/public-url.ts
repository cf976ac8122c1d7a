/**
 * The base URI hosted metadata writes on chain is PUBLIC_URL's: on a public network, a loopback or
 * private address there (the default, http://HOST:PORT, is 127.0.0.1) would point every marketplace
 * at nothing, for good. Only a local development chain may carry one.
 */
import ipaddr from "ipaddr.js";
import { ApiError } from "../http/errors";

/** Chain ids of local development chains: Hardhat's and Anvil's (the embedded chain's), Ganache's and geth --dev's. */
const LOCAL_CHAIN_IDS = new Set([31337n, 1337n]);

/** Address ranges (ipaddr.js names) no marketplace can reach. */
const NOT_PUBLIC = new Set(["loopback", "private", "uniqueLocal", "linkLocal", "carrierGradeNat", "unspecified"]);

/** The range name of a URL's host when nobody outside this machine or network can reach it; else null. */
export function unreachableRange(url: string): string | null {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return "invalid";
  }
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback";
  if (!ipaddr.isValid(host)) return null;
  let address = ipaddr.parse(host);
  if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress())
    address = (address as ipaddr.IPv6).toIPv4Address();
  const range = address.range();
  return NOT_PUBLIC.has(range) ? range : null;
}

/** 422 PUBLIC_URL_NOT_PUBLIC when `publicUrl` may not go on chain `chainId`: before anything is sent. */
export function requirePublicUrlFor(chainId: bigint, publicUrl: string): void {
  if (LOCAL_CHAIN_IDS.has(chainId)) return;
  const range = unreachableRange(publicUrl);
  if (!range) return;
  throw new ApiError(
    "PUBLIC_URL_NOT_PUBLIC",
    `PUBLIC_URL is ${publicUrl} (${range}): a base URI there would reach no marketplace on chain ${chainId}. ` +
      "Set PUBLIC_URL to the address this service is reached at from the internet (https://…), then host again",
    [{ path: "PUBLIC_URL", message: `a ${range} address` }],
  );
}
