import { domainToASCII } from "node:url";

/**
 * A host name as stored: lower case, no final dot, IDN labels in punycode ("bücher.de" →
 * "xn--bcher-kva.de"). Returns null when the input is not a valid name of two or more labels.
 */
export function normalizeDomainName(input: string): string | null {
  const trimmed = input.trim().replace(/\.$/, "");
  if (!trimmed || /[\s/:@]/.test(trimmed)) return null;
  const ascii = domainToASCII(trimmed).toLowerCase();
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split(".");
  if (labels.length < 2) return null;
  const labelOk = (label: string) => /^(?!-)[a-z0-9-]{1,63}(?<!-)$/.test(label);
  if (!labels.every(labelOk)) return null;
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return null;
  return ascii;
}

/**
 * The names one site answers to, which are also the names on its certificate: the domain,
 * `www.` for a main or addon domain (type `domain`), and the names parked on it (DESIGN.md "Web
 * hosting", "Automatic TLS").
 */
export function siteNames(domain: string, domainType: "domain" | "subdomain" | "parked", parked: readonly string[]): string[] {
  return [domain, ...(domainType === "domain" ? [`www.${domain}`] : []), ...[...parked].sort()];
}
