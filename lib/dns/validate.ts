import net from "node:net";
import { normalizeDomainName } from "@/lib/domains/names";
import { validationError } from "@/lib/errors";

// Per-type rules of DNS records (DESIGN.md "Records"). Names are stored relative to the zone
// ("@" for the apex); host-name targets are stored fully qualified, lower case, without the
// final dot (the zone file adds it).

const LABEL = /^(\*|[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)$/;

/**
 * A record name relative to `zone`: "@" or "" is the apex; "www" stays; "www.alice.example" and
 * "www.alice.example." become "www"; any other name with a final dot, or a dotted name that does
 * not end in the zone, is outside the zone → 422 — except names with an underscore label
 * ("_sip._tcp", "s1._domainkey"), which are relative by construction.
 */
export function relativeRecordName(zone: string, input: string): string {
  const name = input.trim().toLowerCase();
  if (name === "" || name === "@" || name === zone || name === `${zone}.`) return "@";
  const absolute = name.endsWith(".");
  const bare = absolute ? name.slice(0, -1) : name;
  let relative: string;
  if (bare.endsWith(`.${zone}`)) relative = bare.slice(0, -(zone.length + 1));
  else if (absolute) throw validationError("name", `must be inside the zone ${zone}`);
  else if (bare.includes(".") && !bare.split(".").some((label) => label.startsWith("_"))) {
    throw validationError("name", `must be inside the zone ${zone}: use a relative name such as "www" or "www.${zone}"`);
  } else relative = bare;
  const labels = relative.split(".");
  if (!labels.every((label) => LABEL.test(label)) || labels.slice(1).includes("*")) {
    throw validationError("name", "has an invalid label: letters, digits, - and _ (a leading * for a wildcard)");
  }
  if (`${relative}.${zone}`.length > 253) throw validationError("name", "is too long");
  return relative;
}

function hostTarget(content: string, field = "content"): string {
  const host = normalizeDomainName(content);
  if (!host) throw validationError(field, "must be a fully qualified host name, e.g. mail.example.com");
  return host;
}

/**
 * One spelling per IPv6 address (lower case, zeros compressed, as the URL standard writes it:
 * `2001:0DB8:0::1` → `2001:db8::1`), so two spellings of one address are one identical record.
 */
function canonicalIpv6(address: string): string {
  return new URL(`http://[${address}]`).hostname.slice(1, -1);
}

export interface RecordFields {
  type: "A" | "AAAA" | "CNAME" | "MX" | "TXT" | "SRV" | "NS";
  content: string;
  priority?: number | null;
  weight?: number | null;
  port?: number | null;
}

/** The stored content and numeric fields of a record, or a 422 naming the bad field. */
export function validateRecordContent(record: RecordFields) {
  const content = record.content.trim();
  const none = { priority: null, weight: null, port: null };
  switch (record.type) {
    case "A":
      if (!net.isIPv4(content)) throw validationError("content", "must be an IPv4 address for an A record");
      return { content, ...none };
    case "AAAA":
      // A zone index (`fe80::1%eth0`) names an interface of this machine, never a DNS answer.
      if (!net.isIPv6(content) || content.includes("%")) {
        throw validationError("content", "must be an IPv6 address for an AAAA record");
      }
      return { content: canonicalIpv6(content), ...none };
    case "CNAME":
    case "NS":
      return { content: hostTarget(content), ...none };
    case "MX":
      if (record.priority == null) throw validationError("priority", "is required for an MX record");
      return { content: hostTarget(content), priority: record.priority, weight: null, port: null };
    case "SRV":
      for (const field of ["priority", "weight", "port"] as const) {
        if (record[field] == null) throw validationError(field, "is required for an SRV record");
      }
      return { content: hostTarget(content), priority: record.priority!, weight: record.weight!, port: record.port! };
    case "TXT":
      // Control characters cannot be written to a zone file; quotes and backslashes are escaped there.
      if (/[\u0000-\u001f\u007f]/.test(content)) throw validationError("content", "must not contain control characters");
      return { content, ...none };
  }
}
