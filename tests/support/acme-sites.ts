import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startNginx, type TestNginx } from "./nginx";
import { type Pebble, startPebble } from "./pebble";
import { freePort } from "./server";

// What an AutoSSL test server needs around it: a test nginx that includes the sites the panel
// writes (own config and ports, never the machine's) and pebble validating through it. `env` is
// the panel's configuration for them.

export interface AcmeSites {
  httpPort: number;
  httpsPort: number;
  pebble: Pebble;
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startAcmeSites(): Promise<AcmeSites> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "acme-sites-"));
  const sites = path.join(root, "sites");
  fs.mkdirSync(sites);
  const [httpPort, httpsPort] = [await freePort(), await freePort()];
  let nginx: TestNginx | null = null;
  let pebble: Pebble | null = null;
  const stop = async () => {
    await pebble?.stop();
    await nginx?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    nginx = await startNginx(`  include ${sites}/*.conf;\n  server { listen ${httpPort} default_server; return 404; }`, httpPort);
    const nginxArgs = `-c ${nginx.dir}/nginx.conf -p ${nginx.dir}`;
    pebble = await startPebble({ httpPort });
    return {
      httpPort,
      httpsPort,
      pebble,
      env: {
        WEB_SERVER: "nginx",
        // Both outside the server's DATA_DIR, which is the panel's alone (0700).
        HOME_ROOT: path.join(root, "home"),
        ACME_CHALLENGE_DIR: path.join(root, "acme-challenge"),
        NGINX_SITES_DIR: sites,
        NGINX_TEST_COMMAND: `nginx -t -q ${nginxArgs}`,
        NGINX_RELOAD_COMMAND: `nginx -s reload ${nginxArgs}`,
        NGINX_PID_FILE: `${nginx.dir}/nginx.pid`,
        WEB_HTTP_PORT: String(httpPort),
        WEB_HTTPS_PORT: String(httpsPort),
        ACME_DIRECTORY_URL: pebble.directoryUrl,
        ACME_CA_BUNDLE: pebble.listenerCaPath,
        ACME_EMAIL: "hostmaster@panel.example",
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
