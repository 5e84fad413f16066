import http from "node:http";
import type { Socket } from "node:net";
import next from "next";
import { connection } from "@/db/client";
import { prepareDatabase } from "@/db/prepare";
import { announceAdminSetup } from "@/lib/admins/setup";
import { closeDataDir, closeNewFiles } from "@/lib/data-dir";
import { syncAllZoneFiles } from "@/lib/dns/zone-file-sync";
import { syncLocalMail } from "@/lib/email/service";
import { startLocalMailPolicy } from "@/lib/email/sending";
import { ConfigError, env } from "@/lib/env";
import { loadEnvFile } from "@/lib/env-file";
import { webHostingEnabled } from "@/lib/provisioning/home-layout";
import { adoptLocalMarks, applyDiskQuotas, syncAllSites } from "@/lib/hosting/service";
import { BODY_TOO_LARGE_MESSAGE, declaresTooLargeBody } from "@/lib/http/body";
import { CLIENT_ADDRESS_HEADER, FORWARDING_HEADERS, resolveClientAddress } from "@/lib/http/client-address";
import { matchApiRoute } from "@/lib/http/registry";
import { registerInstalledPhpVersions } from "@/lib/php/service";
import { syncSshServer } from "@/lib/ssh/service";
import { startMoveDriver, stopMoveDriver } from "@/lib/moves/driver";
import { startNodeEvents } from "@/lib/nodes/events";
import { closePanelBus } from "@/lib/nodes/bus";
import { securityHeaders } from "@/lib/http/security-headers";
import { buildAddressMatcher } from "@/lib/net/address";

// The panel's HTTP server: Next.js behind a thin layer that (1) answers unknown /api paths with
// 404 and wrong methods with 405 (JSON, before authentication: there is nothing to protect) and
// (2) decides the client's address from the socket, believing X-Forwarded-For only from
// TRUSTED_PROXIES. `next start` alone passes forged forwarding headers through, so the panel
// always runs through this file (npm start → scripts/start.mjs → this file's bundle,
// scripts/bundles.mjs). It also refuses bodies announced larger than 1 MiB before Next.js reads a
// byte, and bounds how long a request may take.

function sendJson(res: http.ServerResponse, status: number, body: object, headers: http.OutgoingHttpHeaders = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

export async function startServer(): Promise<http.Server> {
  // What the panel makes from here on is its own; DATA_DIR is closed before anything opens it (lib/data-dir.ts).
  closeNewFiles();
  // panel.env, the same file `npm run panel` reads, so both find the same database.
  loadEnvFile();
  const config = env();
  closeDataDir(config.dataDir);
  // next-auth builds its callback URLs from NEXTAUTH_URL.
  process.env.NEXTAUTH_URL ??= config.publicUrl;
  const db = await connection();
  await prepareDatabase(db);
  if (webHostingEnabled()) {
    const registered = await registerInstalledPhpVersions(db.db);
    if (registered.length) console.log(`PHP ${registered.join(", ")} found on this server and registered`);
  }
  // What this machine's accounts had before the panel marked its work (once), before anything acts on it.
  await adoptLocalMarks(db.db);
  // The zone files are written while `nginx -t` tests the sites (syncAllSites says why).
  await syncAllSites(db.db, () => syncAllZoneFiles(db.db));
  // Quotas turned on since the last start (or plans changed meanwhile): every account's disk_mb.
  await applyDiskQuotas(db.db);
  await syncSshServer(db.db);
  await syncLocalMail(db.db);
  // The sending limits of this machine's accounts, asked by Postfix's submission services.
  await startLocalMailPolicy(db.db);
  await startNodeEvents(db.db);
  // Moves between nodes go on from where they were (lib/moves/driver.ts).
  startMoveDriver(db.db);

  const app = next({ dev: false, dir: process.cwd() });
  await app.prepare();
  const handle = app.getRequestHandler();
  const trustedProxies = config.trustedProxies.length ? buildAddressMatcher(config.trustedProxies) : null;

  // Node's defaults let a client take 300 s to send one request: the panel's requests are small
  // (bodies ≤ 1 MiB), so a request's headers must arrive within 10 s and the whole of it within
  // 30 s, or it is answered 408 and its connection closed (checked every second, not every 30 s).
  const limits = { headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1_000 };
  const server = http.createServer(limits, (req, res) => {
    const pathname = (req.url ?? "/").split("?")[0];
    for (const [name, value] of Object.entries(securityHeaders(pathname))) res.setHeader(name, value);
    if (declaresTooLargeBody(req.headers["content-length"])) {
      return sendJson(res, 413, { error: BODY_TOO_LARGE_MESSAGE });
    }
    if (pathname === "/api" || pathname.startsWith("/api/")) {
      const isBenchRoute = config.benchRoutes && pathname.startsWith("/api/bench/");
      const match = isBenchRoute ? { kind: "found" as const } : matchApiRoute(req.method ?? "GET", pathname);
      if (match.kind === "not_found") return sendJson(res, 404, { error: `No API operation at ${pathname}` });
      if (match.kind === "wrong_method") {
        const allow = match.allow.join(", ");
        return sendJson(res, 405, { error: `${req.method} is not allowed here; allowed: ${allow}` }, { allow });
      }
    }
    const forwardedFor = req.headers["x-forwarded-for"];
    for (const header of FORWARDING_HEADERS) delete req.headers[header];
    const clientAddress = resolveClientAddress(
      req.socket.remoteAddress,
      Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor,
      trustedProxies,
    );
    if (clientAddress) req.headers[CLIENT_ADDRESS_HEADER] = clientAddress;
    void handle(req, res);
  });

  // Node closes a connection whose request body was left unread (a 413) as soon as the answer is
  // written (socket.destroySoon); the bytes still arriving then make the kernel reset the
  // connection, which can discard the answer before the client reads it. A lingering close, as
  // web servers do: half-close after the answer, and close for good 2 s later.
  server.on("connection", (socket: Socket) => {
    socket.destroySoon = () => {
      socket.end();
      setTimeout(() => socket.destroy(), 2000).unref();
    };
  });

  // A client that asks before sending (Expect: 100-continue) is told 413 before it sends anything:
  // it is only told to continue when the size it declares is allowed; the request handler
  // answers the rest.
  server.on("checkContinue", (req, res) => {
    if (!declaresTooLargeBody(req.headers["content-length"])) res.writeContinue();
    server.emit("request", req, res);
  });

  await announceAdminSetup(db.db);
  await new Promise<void>((resolve) => server.listen(config.port, resolve));
  console.log(`Hosting panel listening on port ${config.port} (${config.publicUrl}), storage: ${db.kind}`);

  const shutdown = () => {
    server.close();
    void stopMoveDriver(db.db)
      .catch(() => undefined)
      .then(() => closePanelBus())
      .then(() => db.close())
      .finally(() => process.exit(0));
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
  return server;
}

startServer().catch((error) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error("The panel could not start:", error);
  process.exit(1);
});
