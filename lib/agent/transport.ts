import { checkServerIdentity, type PeerCertificate } from "node:tls";
import type { TlsOptions } from "@nats-io/transport-node";

// TLS between machines (docs/nodes.md "Security"): jobs carry customers' passwords and the
// join carries a node's public key, so the panel and its nodes speak to NATS over `tls://` and the
// join reaches the panel over `https://`, each certificate verified — against a CA the
// administrator gives (NATS_CA_FILE on the panel, `--ca` at the join), else the system's. Cleartext
// (`nats://`, `http://`) is accepted only when asked for (NATS_INSECURE=1 on the panel, `--insecure`
// at the join, kept in the node's node.json), and said at every start.

/** Whether `url` is cleartext (nats://, http://). */
export const isCleartext = (url: string) => /^(nats|http):\/\//i.test(url);

/**
 * The `tls` option of a NATS connection to `url` (one server): for tls://, TLS required (nats.js
 * refuses a server that does not offer it) and the server's certificate verified against `caFile`,
 * or the system's CAs, for the URL's host — a name or an IP address (nats.js alone would check an
 * address's certificate against "localhost"); nothing for an accepted nats://.
 */
export function natsTls(url: string, caFile: string | null): { tls?: TlsOptions } {
  if (isCleartext(url)) return {};
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1");
  const verify = { checkServerIdentity: (_name: string, certificate: PeerCertificate) => checkServerIdentity(host, certificate) };
  return { tls: { ...(caFile ? { caFile } : {}), ...verify } as TlsOptions };
}

/** The warning every start prints while cleartext is accepted. */
export function cleartextWarning(who: string, url: string, how: string): string {
  return `WARNING: ${who} speaks to ${url} without TLS (${how}): the nodes' jobs, customers' passwords among them, cross the network in cleartext, and anyone on the way can read or change them.`;
}
