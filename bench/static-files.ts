import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { renderSite, type Site, type SiteSettings } from "@/lib/provisioning/nginx";
import { startNginx } from "../tests/support/nginx";
import { freePort } from "../tests/support/server";
import { type Measurement, measure as measureRoute, printTable, ratioToBracket } from "./support";

// (j) Static files through nginx, the price of `disable_symlinks if_not_owner from=<home>`
// (docs/security.md "nginx never crosses accounts": nginx follows no link to another owner's file).
// One test nginx of its own, one worker, serves the same home three times, on three ports: the
// server block as the panel renders it ("after"), the same block without that line ("before", the
// panel before it), and "after" with nginx's caches of open files and log files, which keep the
// checks' results (what docs/web-hosting.md "On a real server" suggests for busy servers). For
// each, a small page at the document root and a stylesheet four folders down (each folder below the
// home is one more check), measured in the order before, after, after with caches, before again;
// each is priced against the mean of the two "before" runs, in requests per second and in the
// worker's CPU per request (the steadier of the two on a shared machine). Information, no target:
// what serving a file now costs.

const DISABLE_SYMLINKS = /^ {4}disable_symlinks .*\n/m;

function benchSite(home: string): Site {
  return {
    domain: "static.bench.example",
    username: "benchuser",
    serverNames: ["static.bench.example"],
    documentRoot: path.join(home, "public_html"),
    accessLog: path.join(home, "logs", "static.bench.example.log"),
    errorLog: path.join(home, "logs", "nginx-error.log"),
    profile: "static",
    phpSocket: null,
    proxySocket: null,
    maxBodyMb: 64,
    suspended: false,
    tls: null,
  };
}

export async function runStaticFilesBench(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-bench-static-"));
  const home = path.join(root, "home", "benchuser");
  const files = {
    page: "/index.html",
    stylesheet: "/wp-content/themes/theme/css/style.css",
  };
  fs.mkdirSync(path.join(home, "logs"), { recursive: true });
  fs.mkdirSync(path.join(home, "public_html", "wp-content", "themes", "theme", "css"), { recursive: true });
  fs.writeFileSync(path.join(home, "public_html", files.page), `<!doctype html><title>bench</title>${"<p>text</p>".repeat(80)}\n`);
  fs.writeFileSync(path.join(home, "public_html", files.stylesheet), `body { margin: 0 }\n${".x { color: red }\n".repeat(400)}`);
  const [before, after, cached, https] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const settings = (httpPort: number): SiteSettings => ({
    httpPort,
    httpsPort: https,
    acmeChallengeDir: path.join(root, "acme-challenge"),
    roots: { homes: path.join(root, "home"), phpSockets: path.join(root, "run"), certificates: path.join(root, "certs") },
  });
  const rendered = renderSite(benchSite(home), settings(after));
  if (!DISABLE_SYMLINKS.test(rendered)) throw new Error("the rendered server block has no disable_symlinks line");
  const withoutLine = renderSite(benchSite(home), settings(before)).replace(DISABLE_SYMLINKS, "");
  const withCaches = renderSite(benchSite(home), settings(cached)).replace(
    /^( {4}listen \d+;\n)/m,
    "$1    open_file_cache max=1000 inactive=20s;\n    open_log_file_cache max=1000 inactive=20s;\n",
  );
  fs.writeFileSync(path.join(root, "sites.conf"), `${withoutLine}${rendered}${withCaches}`);
  const nginx = await startNginx(`  include ${root}/sites.conf;`, before);
  try {
    // The one worker's CPU per request: unlike req/s, it barely moves when other work shares the machine.
    const master = fs.readFileSync(path.join(nginx.dir, "nginx.pid"), "utf8").trim();
    const worker = Number(fs.readFileSync(`/proc/${master}/task/${master}/children`, "utf8").trim().split(/\s+/)[0]);
    const measure = (label: string, target: string) => measureRoute(label, target, {}, undefined, worker);
    const url = (port: number, file: string) => `http://127.0.0.1:${port}${file}`;
    const rows: Measurement[] = [];
    const verdicts: string[] = [];
    const cpuRatio = (row: Measurement, first: Measurement, second: Measurement) =>
      row.serverCpuUsPerRequest === null || first.serverCpuUsPerRequest === null || second.serverCpuUsPerRequest === null
        ? "–"
        : (row.serverCpuUsPerRequest / ((first.serverCpuUsPerRequest + second.serverCpuUsPerRequest) / 2)).toFixed(2);
    for (const [name, file] of Object.entries(files)) {
      // nginx compiles nothing: two seconds bring each to its pace (the page cache, the connections).
      for (const port of [before, after, cached]) await measureRoute("warm-up", url(port, file), {}, 2);
      const beforeFirst = await measure(`${name} ${file}, before (no disable_symlinks)`, url(before, file));
      const measured = await measure(`${name} ${file}, after (disable_symlinks if_not_owner from=<home>)`, url(after, file));
      const withCache = await measure(`${name} ${file}, after, with open_file_cache and open_log_file_cache`, url(cached, file));
      const beforeSecond = await measure(`${name} ${file}, before again`, url(before, file));
      for (const row of [beforeFirst, measured, withCache, beforeSecond]) {
        // A file nginx refused (403) would measure the refusal, not the file. (autocannon may count
        // a connection cut as the run ends among its errors: those are shown in the table.)
        if (row.non2xx || row.errors > row.requests / 1000) throw new Error(`${row.label}: ${row.non2xx} answers other than 2xx, ${row.errors} errors`);
      }
      rows.push(beforeFirst, measured, withCache, beforeSecond);
      for (const [label, row] of [["after", measured], ["after with caches", withCache]] as const) {
        verdicts.push(
          `${name}, ${label}/before: ${ratioToBracket(row, beforeFirst, beforeSecond).toFixed(3)} of the requests per second, ${cpuRatio(row, beforeFirst, beforeSecond)} × the worker's CPU per request`,
        );
      }
    }
    console.log("\n(j) Static files through nginx (one worker), before and after disable_symlinks");
    printTable(rows);
    for (const line of verdicts) console.log(line);
  } finally {
    await nginx.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}
