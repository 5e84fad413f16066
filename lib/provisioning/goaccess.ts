import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";

// Visitor statistics with GoAccess over the web server's access logs,
// ACCESS_LOG_DIR/<username>/<domain>.log in combined log format. GoAccess runs as a child
// process (a 200,000-line log takes seconds and ~100 MB: never on the event loop), and its JSON
// report is returned as GoAccess makes it.
//   - one domain: generated on request;
//   - the whole account (all its logs): pre-generated every VISITOR_STATS_PERIOD_MS (by
//     lib/hosting/jobs.ts) into DATA_DIR/visitor-stats/<username>.json, and generated on
//     demand the first time it is asked for before the job has run.

export const VISITOR_STATS_PERIOD_MS = 15 * 60 * 1000;
const TIMEOUT_MS = 120_000;
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

const accountLogDir = (username: string) => path.join(env().accessLogDir, username);
const combinedReportPath = (username: string) => path.join(env().dataDir, "visitor-stats", `${username}.json`);

/** Runs goaccess over `logFiles`; its JSON report (text). Missing or failing → 422. */
export function runGoaccess(logFiles: string[], binary = "goaccess"): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [...logFiles, "--log-format=COMBINED", "-o", "json", "--no-progress"], {
      stdio: ["ignore", "pipe", "pipe"],
      timeout: TIMEOUT_MS,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) child.kill("SIGKILL");
      else chunks.push(chunk);
    });
    child.stderr.on("data", (chunk) => (stderr = (stderr + chunk).slice(-2000)));
    child.on("error", (error: NodeJS.ErrnoException) => {
      reject(
        new AppError(
          "VALIDATION",
          error.code === "ENOENT"
            ? "Visitor statistics are unavailable: GoAccess is not installed on this server (Debian package goaccess)"
            : `Visitor statistics are unavailable: GoAccess could not start (${error.message})`,
        ),
      );
    });
    child.on("close", (code, signal) => {
      if (code === 0) return resolve(Buffer.concat(chunks).toString("utf8"));
      const why = size > MAX_OUTPUT_BYTES ? "its report is too large" : explanation(stderr) || `exit ${signal ?? code}`;
      reject(new AppError("VALIDATION", `GoAccess could not analyse the access log: ${why}`));
    });
  });
}

/**
 * What GoAccess says is wrong, without its banner and the lines naming files (the log's and its
 * configuration's paths are the server's business, not the API's).
 */
function explanation(stderr: string): string {
  return stderr
    .split("\n")
    .map((line) => line.replace(/^==\d+==\s*/, "").trim())
    .filter((line) => line && !/\/|GoAccess - version|Released under/.test(line))
    .join(" ");
}

function parseReport(json: string): Record<string, unknown> {
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    throw new AppError("VALIDATION", "GoAccess produced no readable report");
  }
}

async function exists(file: string) {
  return fs.stat(file).then(
    (stat) => stat.isFile(),
    () => false,
  );
}

/** The report of one domain's log; no log → 404. */
export async function domainReport(username: string, domain: string, binary?: string) {
  const log = path.join(accountLogDir(username), `${domain}.log`);
  if (!(await exists(log))) throw new AppError("NOT_FOUND", `No access log for ${domain}`);
  return parseReport(await runGoaccess([log], binary));
}

async function accountLogs(username: string): Promise<string[]> {
  const dir = accountLogDir(username);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  return names.filter((name) => name.endsWith(".log")).sort().map((name) => path.join(dir, name));
}

/** Regenerates the account's combined report file; false when the account has no logs. */
export async function generateCombinedReport(username: string, binary?: string): Promise<boolean> {
  const logs = await accountLogs(username);
  if (logs.length === 0) return false;
  const json = await runGoaccess(logs, binary);
  parseReport(json);
  const target = combinedReportPath(username);
  await fs.mkdir(path.dirname(target), { recursive: true });
  const temporary = `${target}.${randomBytes(6).toString("hex")}.tmp`;
  await fs.writeFile(temporary, json);
  await fs.rename(temporary, target);
  return true;
}

/** The account's pre-generated combined report (generated now if the job has not run yet). */
export async function combinedReport(username: string, binary?: string) {
  const file = combinedReportPath(username);
  if (!(await exists(file)) && !(await generateCombinedReport(username, binary))) {
    throw new AppError("NOT_FOUND", "No access logs for this account");
  }
  return parseReport(await fs.readFile(file, "utf8"));
}
