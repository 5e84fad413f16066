import http from "node:http";
import https from "node:https";
import net from "node:net";
import tls from "node:tls";

// The join's one request to the panel (`panel node join`, lib/agent/cli.ts). It carries the node's
// public key: over https, the panel's certificate verified so that nobody in between can put their
// key in its place — pinned by its SHA-256 fingerprint (`--fingerprint`, the leaf certificate and
// nothing else counts), or verified for the URL's host against the CA given (`--ca`) and the
// system's CAs. http only when cleartext was accepted (`--insecure`).

export interface PanelTrust {
  /** PEM of the CA(s) that verify the panel's certificate; null: the system's. */
  ca: string | null;
  /** The pinned certificate's SHA-256 fingerprint, as AB:CD:… (parseFingerprint). */
  fingerprint: string | null;
}

/** A SHA-256 fingerprint as openssl prints it (`sha256 Fingerprint=AB:CD:…`) or as hex, normalised; null if it is not one. */
export function parseFingerprint(value: string): string | null {
  const hex = value
    .trim()
    .replace(/^sha256( fingerprint)?[:=]/i, "")
    .replace(/:/g, "")
    .toUpperCase();
  return /^[0-9A-F]{64}$/.test(hex) ? hex.match(/../g)!.join(":") : null;
}

export class PanelTrustError extends Error {}

/** A TLS connection to `url`'s host whose certificate is the pinned one; refused otherwise, before a byte is sent. */
async function pinnedSocket(url: URL, fingerprint: string, timeoutMs: number): Promise<tls.TLSSocket> {
  const socket = tls.connect({
    host: url.hostname,
    port: Number(url.port || 443),
    servername: net.isIP(url.hostname) ? undefined : url.hostname,
    // The chain is not what decides here: the pinned fingerprint is, checked below.
    rejectUnauthorized: false,
  });
  socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
  await new Promise<void>((resolve, reject) => {
    socket.once("secureConnect", resolve);
    socket.once("error", reject);
  });
  const presented = socket.getPeerCertificate().fingerprint256;
  if (presented !== fingerprint) {
    socket.destroy();
    throw new PanelTrustError(
      `The panel at ${url.origin} presented a certificate whose SHA-256 fingerprint is ${presented}, not the one given with --fingerprint: refused (nothing was sent; someone may be in between)`,
    );
  }
  socket.setTimeout(0);
  return socket;
}

/** POSTs `body` as JSON to `url`: the answer's status and parsed body ({} when it is not JSON). */
export async function postToPanel(url: URL, body: unknown, trust: PanelTrust, timeoutMs = 30_000): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = JSON.stringify(body);
  const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(payload) };
  const secure = url.protocol === "https:";
  const socket = secure && trust.fingerprint ? await pinnedSocket(url, trust.fingerprint, timeoutMs) : null;
  return new Promise((resolve, reject) => {
    const options: https.RequestOptions = { method: "POST", headers, timeout: timeoutMs };
    // The pinned connection itself (an agent, even `false`, would make one of its own).
    if (socket) options.createConnection = () => socket;
    else {
      options.agent = false;
      // The given CA besides the system's: nginx may serve a public certificate while NATS has the CA's.
      if (secure && trust.ca) options.ca = [...tls.rootCertificates, trust.ca];
    }
    const request = (secure ? https : http).request(url, options, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
        if (text.length > 65_536) request.destroy(new Error("the panel's answer is too long"));
      });
      response.on("end", () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = {};
        }
        resolve({ status: response.statusCode ?? 0, body: parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {} });
      });
    });
    request.on("timeout", () => request.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    request.on("error", (error: NodeJS.ErrnoException) => {
      // A certificate the system's CAs (or the given one) do not vouch for, or for another name.
      if (secure && !socket && (error.code?.startsWith("ERR_TLS") || /certificate|self[- ]signed|CERT_/i.test(`${error.code} ${error.message}`))) {
        reject(new PanelTrustError(`The panel's certificate at ${url.origin} was not verified (${error.message}): give the CA that signed it with --ca, or pin it with --fingerprint`));
      } else reject(error);
    });
    request.end(payload);
  });
}
