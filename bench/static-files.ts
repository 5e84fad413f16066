import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { renderSite, type Site, type SiteSettings } from "@/lib/provisioning/nginx";
import { startNginx } from "../tests/support/nginx";
import { freePort } from "../tests/support/server";
import { type Measurement, measure as measureRoute, printTable, ratioToBracket, verdict, warmUp } from "./support";

// (j) Static files through nginx, the price of `disable_symlinks if_not_owner from=<home>`
// (README "Security": nginx follows no link to another owner's file). One test nginx of its own
// serves the same home twice: a server block as the panel renders it, and the same block without
// that one line (the panel before it), on two ports. For each, a small page at the document root
// and a stylesheet four folders down (each folder below the home is one more check), each
// measured after (the line) against before measured just before and just after it. Target:
// after/before ≥ 0.9 (nearly free).

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
  const [before, after, https] = [await freePort(), await freePort(), await freePort()];
  const settings = (httpPort: number): SiteSettings => ({
    httpPort,
    httpsPort: https,
    acmeChallengeDir: path.join(root, "acme-challenge"),
    roots: { homes: path.join(root, "home"), phpSockets: path.join(root, "run"), certificates: path.join(root, "certs") },
  });
  const rendered = renderSite(benchSite(home), settings(after));
  if (!DISABLE_SYMLINKS.test(rendered)) throw new Error("the rendered server block has no disable_symlinks line");
  const withoutLine = renderSite(benchSite(home), settings(before)).replace(DISABLE_SYMLINKS, "");
  fs.writeFileSync(path.join(root, "sites.conf"), `${withoutLine}${rendered}`);
  const nginx = await startNginx(`  include ${root}/sites.conf;`, before);
  try {
    // The one worker's CPU per request: unlike req/s, it barely moves when other work shares the machine.
    const master = fs.readFileSync(path.join(nginx.dir, "nginx.pid"), "utf8").trim();
    const worker = Number(fs.readFileSync(`/proc/${master}/task/${master}/children`, "utf8").trim().split(/\s+/)[0]);
    const measure = (label: string, target: string) => measureRoute(label, target, {}, undefined, worker);
    const url = (port: number, file: string) => `http://127.0.0.1:${port}${file}`;
    const rows: Measurement[] = [];
    const ratios: [string, number][] = [];
    for (const [name, file] of Object.entries(files)) {
      for (const port of [before, after]) await warmUp(url(port, file));
      const beforeFirst = await measure(`${name} ${file}, before (no disable_symlinks)`, url(before, file));
      const measured = await measure(`${name} ${file}, after (disable_symlinks if_not_owner from=<home>)`, url(after, file));
      const beforeSecond = await measure(`${name} ${file}, before again`, url(before, file));
      for (const row of [beforeFirst, measured, beforeSecond]) {
        if (row.non2xx || row.errors) throw new Error(`${row.label}: ${row.non2xx} answers other than 2xx, ${row.errors} errors`);
      }
      rows.push(beforeFirst, measured, beforeSecond);
      ratios.push([name, ratioToBracket(measured, beforeFirst, beforeSecond)]);
    }
    console.log("\n(j) Static files through nginx (one worker), before and after disable_symlinks");
    printTable(rows);
    for (const [name, ratio] of ratios) verdict(`after/before, ${name}`, ratio, 0.9);
    for (let index = 0; index < rows.length; index += 3) {
      const [first, measured, second] = rows.slice(index, index + 3).map((row) => row.serverCpuUsPerRequest);
      if (first !== null && measured !== null && second !== null) {
        console.log(`  ${rows[index].label.split(" ")[0]}: the worker's CPU per request ${(measured / ((first + second) / 2)).toFixed(3)} × before (information)`);
      }
    }
  } finally {
    await nginx.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}
