import { randomBytes } from "node:crypto";
import fs, { type FileHandle } from "node:fs/promises";
import path from "node:path";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { accessLogName, accountLogLocation, isAccessLogName } from "./home-layout";
import { LinkInHomeError, listDirectory, openDirectoryPath, openFileIn, openTrustedDirectory, removeTreeIn } from "./home-files";
import { type ChildExit, childExit, startChild, toolEnv } from "./system";

// Visitor statistics with GoAccess over the web server's access logs, <domain>.log in combined
// log format in the account's log directory (the home's logs/, or ACCESS_LOG_DIR/<username>
// when another web server writes them: lib/hosting/home.ts accountLogLocation). GoAccess runs as a child
// process (a 200,000-line log takes seconds and ~100 MB: never on the event loop), and its JSON
// report is returned as GoAccess makes it.
//   - one domain: generated on request;
//   - the whole account (all its logs): pre-generated every VISITOR_STATS_PERIOD_MS (by
//     lib/hosting/jobs.ts) into DATA_DIR/visitor-stats/<username>.json, and generated on
//     demand the first time it is asked for before the job has run.
// Logs are opened as ./home-files.ts says (a log or the account's log directory that is a link
// → 422, never followed) and GoAccess reads the opened descriptors (/dev/fd/3…), not paths.

export const VISITOR_STATS_PERIOD_MS = 15 * 60 * 1000;
const TIMEOUT_MS = 120_000;
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

const combinedReportPath = (username: string) => path.join(env().dataDir, "visitor-stats", `${username}.json`);

/**
 * Runs goaccess over the opened `logs` (handed to it as descriptors 3, 4…, never by path); its
 * JSON report (text). Missing or failing → 422.
 */
export async function runGoaccess(logs: FileHandle[], binary = "goaccess"): Promise<string> {
  const descriptors = logs.map((_, index) => `/dev/fd/${index + 3}`);
  const child = startChild(binary, [...descriptors, "--log-format=COMBINED", "-o", "json", "--no-progress"], {
    env: toolEnv(),
    stdio: ["ignore", "pipe", "pipe", ...logs.map((log) => log.fd)],
    timeoutMs: TIMEOUT_MS,
  });
  const chunks: Buffer[] = [];
  let size = 0;
  child.stdout!.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_OUTPUT_BYTES) child.kill("SIGKILL");
    else chunks.push(chunk);
  });
  let exit: ChildExit;
  try {
    exit = await childExit(child);
  } catch (error) {
    const why =
      (error as NodeJS.ErrnoException).code === "ENOENT"
        ? "GoAccess is not installed on this server (Debian package goaccess)"
        : `GoAccess could not start (${(error as Error).message})`;
    throw new AppError("VALIDATION", `Visitor statistics are unavailable: ${why}`);
  }
  if (exit.code === 0) return Buffer.concat(chunks).toString("utf8");
  const why = size > MAX_OUTPUT_BYTES ? "its report is too large" : explanation(exit.stderr) || `exit ${exit.signal ?? exit.code}`;
  throw new AppError("VALIDATION", `GoAccess could not analyse the access log: ${why}`);
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

/** The account's log directory, opened without following a link; missing → null. */
async function openAccountLogDir(username: string): Promise<FileHandle | null> {
  const { trusted, below } = accountLogLocation(username);
  const root = await openTrustedDirectory(trusted);
  if (!root) return null;
  try {
    return await openDirectoryPath(root, below);
  } finally {
    await root.close();
  }
}

/** A refusal of ./home-files.ts as a 422 naming the request's field. */
const rethrowFor = (field: string) => (error: unknown) => {
  throw error instanceof LinkInHomeError ? error.forField(field) : error;
};

async function closeAll(handles: FileHandle[]) {
  await Promise.all(handles.map((handle) => handle.close()));
}

/** The report of one domain's log; no log → 404; a log that is a link → 422 naming `domain`. */
export async function domainReport(username: string, domain: string, binary?: string) {
  const dir = await openAccountLogDir(username).catch(rethrowFor("domain"));
  const log = dir ? await openFileIn(dir, accessLogName(domain)).catch(rethrowFor("domain")).finally(() => dir.close()) : null;
  if (!log) throw new AppError("NOT_FOUND", `No access log for ${domain}`);
  try {
    return parseReport(await runGoaccess([log], binary));
  } finally {
    await log.close();
  }
}

/** Every access log of the account, opened (the caller closes them); any of them a link → 422. */
async function openAccountLogs(username: string): Promise<FileHandle[]> {
  const dir = await openAccountLogDir(username);
  if (!dir) return [];
  const logs: FileHandle[] = [];
  try {
    const names = (await listDirectory(dir)).filter(isAccessLogName).sort();
    for (const name of names) {
      const log = await openFileIn(dir, name);
      if (log) logs.push(log);
    }
    return logs;
  } catch (error) {
    await closeAll(logs);
    throw error;
  } finally {
    await dir.close();
  }
}

/** Regenerates the account's combined report file; false when the account has no logs. */
export async function generateCombinedReport(username: string, binary?: string): Promise<boolean> {
  const logs = await openAccountLogs(username);
  if (logs.length === 0) return false;
  let json: string;
  try {
    json = await runGoaccess(logs, binary);
  } finally {
    await closeAll(logs);
  }
  parseReport(json);
  const target = combinedReportPath(username);
  await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
  const temporary = `${target}.${randomBytes(6).toString("hex")}.tmp`;
  // The panel's alone, like all of DATA_DIR: another account's visitors are none of a customer's business.
  await fs.writeFile(temporary, json, { mode: 0o600, flag: "wx" });
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

/**
 * Terminate: the account's logs in ACCESS_LOG_DIR/<username> (another web server's, or an older
 * version's; never through a link) and its combined report. Those in the home go with the home.
 */
export async function removeAccountLogs(username: string): Promise<void> {
  const logRoot = await openTrustedDirectory(env().accessLogDir);
  if (logRoot) {
    try {
      await removeTreeIn(logRoot, username);
    } finally {
      await logRoot.close();
    }
  }
  await fs.rm(combinedReportPath(username), { force: true });
}
