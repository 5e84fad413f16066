import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { freePort } from "./server";

// A real ACME server for tests: pebble (Debian package) with pebble-challtestsrv as its DNS,
// which answers every name with 127.0.0.1, so HTTP-01 validation reaches the test's own web
// server on `httpPort`. PEBBLE_VA_NOSLEEP=1 removes pebble's random validation delay.

export interface Pebble {
  directoryUrl: string;
  /** PEM of pebble's listener certificate: ACME_CA_BUNDLE for the panel. */
  listenerCaPath: string;
  /** PEM of the root that signs issued certificates (trust it to fetch a site over HTTPS). */
  issuanceRoot: string;
  /** Makes `name` resolve to `address` instead of 127.0.0.1 (challtestsrv's mock DNS). */
  resolve(name: string, address: string): Promise<void>;
  /** Makes every DNS query for `name` fail (SERVFAIL): the CA cannot validate it. */
  servfail(name: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startPebble({ httpPort }: { httpPort: number }): Promise<Pebble> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pebble-"));
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.map(stopChild));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [acmePort, managementPort, dnsPort, challtestPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const cert = path.join(dir, "listener.pem");
    const key = path.join(dir, "listener.key");
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
      "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-keyout", key, "-out", cert,
    ], { stdio: "ignore" });
    const config = path.join(dir, "pebble.json");
    fs.writeFileSync(config, JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`,
        managementListenAddress: `127.0.0.1:${managementPort}`,
        certificate: cert,
        privateKey: key,
        httpPort,
        tlsPort: httpPort,
        ocspResponderURL: "",
        externalAccountBindingRequired: false,
      },
    }));

    children.push(spawnLogged("pebble-challtestsrv", [
      "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "",
      "-dns01", `127.0.0.1:${dnsPort}`, "-management", `127.0.0.1:${challtestPort}`,
      "-http01", "", "-https01", "", "-tlsalpn01", "",
    ], {}));
    children.push(spawnLogged("pebble", ["-config", config, "-dnsserver", `127.0.0.1:${dnsPort}`], {
      PEBBLE_VA_NOSLEEP: "1",
      // Every new authorization is validated afresh (a test's failure must not hide behind reuse).
      PEBBLE_AUTHZREUSE: "0",
    }));

    const ca = fs.readFileSync(cert);
    const directoryUrl = `https://127.0.0.1:${acmePort}/dir`;
    await waitFor(() => request("GET", directoryUrl, ca), "pebble's directory");
    const issuanceRoot = await waitFor(() => request("GET", `https://127.0.0.1:${managementPort}/roots/0`, ca), "pebble's root");
    return {
      directoryUrl,
      listenerCaPath: cert,
      issuanceRoot,
      async resolve(name, address) {
        await request("POST", `http://127.0.0.1:${challtestPort}/add-a`, null, JSON.stringify({ host: `${name}.`, addresses: [address] }));
      },
      async servfail(name) {
        await request("POST", `http://127.0.0.1:${challtestPort}/set-servfail`, null, JSON.stringify({ host: `${name}.` }));
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function spawnLogged(command: string, args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => (output = (output + chunk).slice(-4000));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  child.on("error", (error) => keep(Buffer.from(`${error}\n`))); // a missing program fails the wait, not the process
  child.once("exit", (code, signal) => {
    if (signal !== "SIGTERM" && process.env.DEBUG_PEBBLE !== undefined) console.error(`${command} exited (${code ?? signal}):\n${output}`);
  });
  return child;
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

async function waitFor<T>(attempt: () => Promise<T>, what: string): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what} did not answer in 15 s: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** One request; resolves with the body of a 2xx answer. `ca` null: plain HTTP. */
function request(method: string, url: string, ca: Buffer | null, body?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const onResponse = (response: http.IncomingMessage) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => (text += chunk));
      response.on("end", () =>
        response.statusCode! >= 200 && response.statusCode! < 300 ? resolve(text) : reject(new Error(`${method} ${url}: ${response.statusCode} ${text}`)),
      );
    };
    const req = ca ? https.request(url, { method, ca }, onResponse) : http.request(url, { method }, onResponse);
    req.on("error", reject);
    req.end(body);
  });
}
