import net from "node:net";
import { addressOrCidrError } from "./ip-syntax";

// IP addresses and CIDR ranges, as used by key IP restrictions and TRUSTED_PROXIES.
// Entries are "192.0.2.7", "2001:db8::1", "10.0.0.0/8" or "2001:db8::/32".

export type AddressFamily = "ipv4" | "ipv6";

/** `::ffff:192.0.2.7` (an IPv4 peer on a dual-stack socket) → `192.0.2.7`. */
export function normalizeAddress(address: string): string {
  const trimmed = address.trim();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(trimmed);
  return mapped ? mapped[1] : trimmed.toLowerCase();
}

function familyOf(address: string): AddressFamily | null {
  const version = net.isIP(address);
  return version === 4 ? "ipv4" : version === 6 ? "ipv6" : null;
}

/** A matcher over address/CIDR entries; throws on an invalid entry. */
export function buildAddressMatcher(entries: readonly string[]): net.BlockList {
  const list = new net.BlockList();
  for (const entry of entries) {
    const error = addressOrCidrError(entry);
    if (error) throw new Error(error);
    const [rawAddress, prefix] = entry.trim().split("/");
    const address = normalizeAddress(rawAddress);
    const family = familyOf(address)!;
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return list;
}

export function addressMatches(list: net.BlockList, address: string): boolean {
  const normalized = normalizeAddress(address);
  const family = familyOf(normalized);
  return family !== null && list.check(normalized, family);
}

/** Parses a comma- or space-separated list (TRUSTED_PROXIES); throws naming a bad entry. */
export function parseCidrList(value: string): string[] {
  const entries = value.split(/[\s,]+/).filter(Boolean);
  buildAddressMatcher(entries);
  return entries;
}
