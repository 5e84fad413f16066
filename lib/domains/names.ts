import net from "node:net";
import { domainToASCII } from "node:url";
import { env } from "@/lib/env";
import { isAsciiHostName } from "@/lib/provisioning/rules";

/**
 * A host name as stored: lower case, no final dot, IDN labels in punycode ("bücher.de" →
 * "xn--bcher-kva.de"). Returns null when the input is not a valid name of two or more labels.
 */
export function normalizeDomainName(input: string): string | null {
  const trimmed = input.trim().replace(/\.$/, "");
  if (!trimmed || /[\s/:@]/.test(trimmed)) return null;
  const ascii = domainToASCII(trimmed).toLowerCase();
  return isAsciiHostName(ascii) ? ascii : null;
}

/**
 * The names one site answers to, which are also the names on its certificate: the domain,
 * `www.` for a main or addon domain (type `domain`), and the names parked on it (DESIGN.md "Web
 * hosting", "Automatic TLS").
 */
export function siteNames(domain: string, domainType: "domain" | "subdomain" | "parked", parked: readonly string[]): string[] {
  return [domain, ...(domainType === "domain" ? [`www.${domain}`] : []), ...[...parked].sort()];
}

// Local names: they reach this machine or its network, never a customer's site on the internet.
const LOCAL_NAMES = ["localhost", "localdomain", "local"];

/**
 * The names the server keeps for itself: the panel's own host name (PUBLIC_URL's), its name
 * servers (DNS_NAMESERVERS, or ns1/ns2 of the panel's host) and SSH_HOST. IP addresses are not
 * names and are left out.
 */
export function serverNames(): string[] {
  const { publicUrl, nameservers, sshHost } = env();
  const names = [new URL(publicUrl).hostname, ...nameservers, sshHost].map((name) => name.toLowerCase().replace(/\.$/, ""));
  return [...new Set(names.filter((name) => name.includes(".") && net.isIP(name.replace(/^\[|\]$/g, "")) === 0))];
}

const isAtOrUnder = (name: string, parent: string) => name === parent || name.endsWith(`.${parent}`);

/**
 * Why no account may hold the (normalised) domain `name`, or null when one may: a local name
 * (`localhost`, `*.localhost`, `*.local`…), or one of `kept` (the server's own names), a name
 * inside one (a site or certificate passing for the panel) or a name containing one (a zone on
 * this server that would hold the panel's or its name servers' records).
 */
export function keptNameProblem(name: string, kept: readonly string[] = serverNames()): string | null {
  if (LOCAL_NAMES.some((local) => isAtOrUnder(name, local))) return "is a local name: it never reaches a site on the internet";
  for (const own of kept) {
    if (name === own) return "is one of this server's own names (the panel, its name servers, its SSH host)";
    if (isAtOrUnder(name, own)) return "is inside one of this server's own names (the panel, its name servers, its SSH host)";
    if (isAtOrUnder(own, name)) return "contains one of this server's own names (the panel, its name servers, its SSH host)";
  }
  return null;
}
