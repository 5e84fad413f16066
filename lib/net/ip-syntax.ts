// Address syntax checks that run anywhere (server and browser forms share them): IPv4 in dotted
// decimal, IPv6 as the WHATWG URL parser accepts it in a host, and CIDR prefixes.

const OCTET = "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const IPV4 = new RegExp(`^${OCTET}(\\.${OCTET}){3}$`);

export const isIPv4 = (value: string) => IPV4.test(value);

export const isIPv6 = (value: string) => value.includes(":") && !value.includes("%") && URL.canParse(`http://[${value}]/`);

/** Why an IP restriction entry is invalid, or null when it is a valid address or CIDR. */
export function addressOrCidrError(entry: string): string | null {
  const [address, prefix, ...rest] = entry.trim().split("/");
  const family = isIPv4(address) ? "ipv4" : isIPv6(address) ? "ipv6" : null;
  if (!family || rest.length > 0) return `"${entry}" is not an IPv4/IPv6 address or CIDR range`;
  if (prefix === undefined) return null;
  const max = family === "ipv4" ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) {
    return `"${entry}" has an invalid prefix length (0–${max})`;
  }
  return null;
}
