import { execFile, execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import tls from "node:tls";

// TLS between the test's machines as docs/nodes.md "Three machines, step by step" sets it up: a CA made with
// openssl in the test's own directory, and a server certificate it signs for the names the
// machines use (the panel's front and the NATS server share it, as on machine P).

/** The name test nodes reach machine P by (their own /etc/hosts says where: tests/support/test-node.ts). */
export const PANEL_HOST_NAME = "panel.test";

export interface TestCertificates {
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The server certificate's SHA-256 fingerprint, as Node and `openssl x509 -fingerprint -sha256` print it. */
  fingerprint: string;
}

const openssl = (args: string[]) => execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });

/**
 * A CA of its own under `dir` and a certificate it signs for `names` (host names and IP addresses),
 * the same commands as docs/nodes.md.
 */
export function makeTestCertificates(dir: string, names: string[] = [PANEL_HOST_NAME, "127.0.0.1"]): TestCertificates {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = (name: string) => path.join(dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(["req", "-x509", ...ec, "-keyout", file("ca.key"), "-out", file("ca.crt"), "-days", "2", "-subj", "/CN=Test hosting panel CA"]);
  openssl(["req", ...ec, "-keyout", file("server.key"), "-out", file("server.csr"), "-subj", `/CN=${names[0]}`]);
  const altNames = names.map((name) => (net.isIP(name) ? `IP:${name}` : `DNS:${name}`)).join(",");
  fs.writeFileSync(file("server.ext"), `subjectAltName=${altNames}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  openssl(["x509", "-req", "-in", file("server.csr"), "-CA", file("ca.crt"), "-CAkey", file("ca.key"), "-CAcreateserial", "-days", "2", "-extfile", file("server.ext"), "-out", file("server.crt")]);
  for (const name of ["ca.key", "server.key"]) fs.chmodSync(file(name), 0o600);
  return {
    caFile: file("ca.crt"),
    certFile: file("server.crt"),
    keyFile: file("server.key"),
    fingerprint: new X509Certificate(fs.readFileSync(file("server.crt"))).fingerprint256,
  };
}

export interface TlsFront {
  port: number;
  stop(): Promise<void>;
}

/**
 * TLS in front of a plain TCP port on 127.0.0.1, as nginx stands in front of the panel on machine
 * P (docs/operations.md): it ends TLS with `certificates` and passes the bytes on.
 */
export async function startTlsFront(targetPort: number, certificates: Pick<TestCertificates, "certFile" | "keyFile">, listen = "127.0.0.1"): Promise<TlsFront> {
  const sockets = new Set<net.Socket>();
  const server = tls.createServer({ cert: fs.readFileSync(certificates.certFile), key: fs.readFileSync(certificates.keyFile) }, (client) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  // A handshake a client gives up on is its business.
  server.on("tlsClientError", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, listen, resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Whether a client asking for `name` on `port` (implicit TLS, or after STARTTLS) gets a chain that
 * `caFile` vouches for as `expectedName` (openssl s_client, verifying both).
 */
export function tlsVerifies(port: number, name: string, caFile: string, expectedName = name, starttls?: "smtp"): Promise<boolean> {
  const args = ["s_client", "-connect", `127.0.0.1:${port}`, "-servername", name, "-CAfile", caFile, "-verify_hostname", expectedName, "-verify_return_error", ...(starttls ? ["-starttls", starttls] : [])];
  return new Promise((resolve) => {
    const child = execFile("openssl", args, { timeout: 20_000 }, (_error, stdout) => resolve(/Verify return code: 0 \(ok\)/.test(String(stdout))));
    child.stdin?.end();
  });
}
