import type net from "node:net";
import { addressMatches, normalizeAddress } from "@/lib/net/address";

/**
 * The header through which server.ts hands the client's address to route handlers. server.ts
 * deletes any incoming copy (and every forwarding header), so only it can set this one.
 */
export const CLIENT_ADDRESS_HEADER = "x-panel-client-address";

export const FORWARDING_HEADERS = ["x-forwarded-for", "x-real-ip", "forwarded", CLIENT_ADDRESS_HEADER];

/**
 * The client's address: the socket's peer, unless that peer is a trusted proxy, in which case
 * X-Forwarded-For is walked from the right past trusted proxies to the first untrusted hop. A
 * client cannot forge its way in: entries left of an untrusted hop are never read.
 */
export function resolveClientAddress(
  peerAddress: string | undefined,
  forwardedFor: string | undefined,
  trustedProxies: net.BlockList | null,
): string | null {
  if (!peerAddress) return null;
  let address = normalizeAddress(peerAddress);
  if (!trustedProxies || !forwardedFor) return address;
  const hops = forwardedFor.split(",").map((hop) => hop.trim()).filter(Boolean);
  while (addressMatches(trustedProxies, address) && hops.length > 0) {
    address = normalizeAddress(hops.pop()!);
  }
  return address;
}

export const clientAddressOf = (request: Request): string | null =>
  request.headers.get(CLIENT_ADDRESS_HEADER);
