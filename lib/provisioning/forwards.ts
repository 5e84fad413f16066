import fs from "node:fs";
import { certificateOf } from "./hosting";
import { webHostingEnabled } from "./home-layout";
import { applyForwardedMail } from "./mail";
import { applySites, forwardDomains, forwardHeader, PROXY_HEADERS, type SiteSettings, siteSettings, type TlsCertificate } from "./nginx";
import { checkedAbsolutePath, checkedHostName, checkedIpAddress, checkedPathInside, checkedPort, refuseRenderedValue } from "./render-checks";

// A moved account's sites on its old node, for the time resolvers may still send visitors there
// (docs/nodes.md "Moving accounts": what a visitor with a cached address sees): each server
// block of the account becomes a forward of the same names to the node that serves it now, in the
// same file (NGINX_SITES_DIR/<domain>.conf), so nginx swaps the site for its forward in one reload
// and no request meets neither. The forward reads nothing of the account: no home, no log in it;
// HTTPS is answered with this machine's own certificate for the domain (its key never leaves the
// machine), kept until the forward goes.

const RENDERER = "nginx forward";

/** The Via header's name of this proxy in a forward's answers. */
export const FORWARD_VIA = "hosting-panel-forward";

/** One of the moved account's domains, as the panel's job names it. */
export interface ForwardedSite {
  domain: string;
  /** Every name its site answered to here: the domain first, `www.`, the names parked on it. */
  server_names: string[];
}

export interface Forward {
  domain: string;
  serverNames: string[];
  /** The node that serves the account now: its IPv4 address, as the panel records it. */
  target: string;
  /** When the forward ends (the panel removes it then; a reconcile of this node removes it once past). */
  until: Date;
  /** This machine's certificate for the domain: then HTTPS is forwarded too. */
  tls: TlsCertificate | null;
  /** The CAs that sign the target's certificates (the system's bundle), to verify it; null: HTTPS goes to the target's HTTP port. */
  trustedCertificates: string | null;
}

/** Debian's bundle of the CAs the system trusts. */
const SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

// What the target's site receives: the visitor's host, address and scheme (its logs and PHP's
// $_SERVER see the visitor's, through X-Forwarded-*; REMOTE_ADDR is this node's). The visitor's
// answer says it came through a proxy (Via, as HTTP asks of one): what the site's own answers lack.
const proxyLines = (upstream: string) => [
  `        proxy_pass ${upstream};`,
  `        add_header Via "1.1 ${FORWARD_VIA}";`,
  "        proxy_http_version 1.1;",
  ...PROXY_HEADERS.map((header) => `        proxy_set_header ${header};`),
  "        proxy_read_timeout 300s;",
];

function checkedForward(forward: Forward, settings: SiteSettings): Forward {
  checkedHostName(RENDERER, "domain", forward.domain);
  if (!Array.isArray(forward.serverNames) || forward.serverNames[0] !== forward.domain) refuseRenderedValue(RENDERER, "first server name", forward.serverNames?.[0], "it must be the domain");
  for (const name of forward.serverNames) checkedHostName(RENDERER, "server name", name);
  checkedIpAddress(RENDERER, "target address", forward.target, 4);
  if (!(forward.until instanceof Date) || Number.isNaN(forward.until.getTime())) refuseRenderedValue(RENDERER, "end", forward.until, "a time");
  if (forward.tls !== null) {
    checkedPathInside(RENDERER, "certificate", forward.tls.certificatePath, settings.roots.certificates);
    checkedPathInside(RENDERER, "certificate key", forward.tls.keyPath, settings.roots.certificates);
  }
  if (forward.trustedCertificates !== null) checkedAbsolutePath(RENDERER, "trusted certificates", forward.trustedCertificates);
  checkedPort(RENDERER, "HTTP port", settings.httpPort);
  checkedPort(RENDERER, "HTTPS port", settings.httpsPort);
  return forward;
}

/**
 * The server block(s) of a forward: HTTP to the target's HTTP port; with a certificate here,
 * HTTPS too — to the target's HTTPS port with SNI and a verified certificate for the visitor's
 * host, and where that fails (the target has no certificate for it yet: AutoSSL issues it there
 * after the move) to its HTTP port. The target listens on the same ports as this node.
 */
export function renderForward(unchecked: Forward, settings: SiteSettings): string {
  const forward = checkedForward(unchecked, settings);
  const plain = `http://${forward.target}${settings.httpPort === 80 ? "" : `:${settings.httpPort}`}`;
  const common = [`    server_name ${forward.serverNames.join(" ")};`, "    access_log off;"];
  const lines = [forwardHeader(forward.domain, forward.until), "server {", `    listen ${settings.httpPort};`, ...common, "    location / {", ...proxyLines(plain), "    }", "}"];
  if (forward.tls) {
    lines.push("server {", `    listen ${settings.httpsPort} ssl;`, ...common);
    lines.push(`    ssl_certificate ${forward.tls.certificatePath};`, `    ssl_certificate_key ${forward.tls.keyPath};`);
    if (forward.trustedCertificates) {
      lines.push(
        "    location / {",
        ...proxyLines(`https://${forward.target}${settings.httpsPort === 443 ? "" : `:${settings.httpsPort}`}`),
        "        proxy_ssl_server_name on;",
        "        proxy_ssl_name $host;",
        "        proxy_ssl_verify on;",
        "        proxy_ssl_verify_depth 4;",
        `        proxy_ssl_trusted_certificate ${forward.trustedCertificates};`,
        // nginx's own 502 (no TLS for that name there, or a certificate that does not verify),
        // never the target's answer (proxy_intercept_errors is off): the request goes in clear.
        "        error_page 502 = @plain;",
        "    }",
        "    location @plain {",
        ...proxyLines(plain),
        "    }",
      );
    } else {
      lines.push("    location / {", ...proxyLines(plain), "    }");
    }
    lines.push("}");
  }
  return `${lines.join("\n")}\n`;
}

/**
 * `forward.apply`: the moved account's sites here become forwards to `target` until `until` (the
 * names from the panel's job; the certificates this machine's own). One nginx test and reload;
 * refused whole (nothing changed) when nginx refuses it. Run again, it writes the same files.
 */
export async function applyForwards(input: { target: string; until: string; sites: ForwardedSite[] }): Promise<null> {
  if (!webHostingEnabled()) return null;
  const settings = siteSettings();
  const until = new Date(input.until);
  const trustedCertificates = fs.existsSync(SYSTEM_CA_BUNDLE) ? SYSTEM_CA_BUNDLE : null;
  const changes = [];
  for (const site of input.sites) {
    const tls = await certificateOf(checkedHostName(RENDERER, "domain", site.domain));
    changes.push({ domain: site.domain, contents: renderForward({ domain: site.domain, serverNames: site.server_names, target: input.target, until, tls, trustedCertificates }, settings) });
  }
  await applySites(changes);
  // Its mail: deferred here while the account's copy is still here, then relayed to the target
  // until the forward ends (./mail.ts renderMailTables).
  await applyForwardedMail({ added: input.sites.map((site) => site.domain), target: input.target, until: input.until });
  return null;
}

/** `forward.remove`: the forwards of `domains` go (a file that is not a forward the panel wrote is left as it is); this node then answers for them as for any unknown name. */
export async function removeForwards(input: { domains: string[] }): Promise<null> {
  if (!webHostingEnabled()) return null;
  const forwards = new Set(await forwardDomains(input.domains));
  const strays = input.domains.filter((domain) => !forwards.has(domain));
  if (strays.length) console.error(`[web] ${strays.join(", ")}: no forward of the panel's here to remove`);
  await applyForwardedMail({ removed: input.domains });
  if (forwards.size === 0) return null;
  await applySites([...forwards].map((domain) => ({ domain, contents: null })));
  return null;
}
