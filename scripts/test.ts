import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildIfNeeded } from "./build-if-needed";
import { changedFiles, testsReaching } from "./test-graph";

// `npm test`: build when needed, then every test file under tests/ (node:test through tsx), then
// the Playwright suite under e2e/. Files run side by side, TEST_CONCURRENCY at a time (default
// 3 on 2 cores: docs/testing.md), longest first; the few that cannot share the machine
// (RUNS_ALONE) run one by one after the others. Each file is a node process of its own whose
// output is printed whole when it ends — a file that runs on both backends (every use of
// testBackends() a `for (const backend of testBackends())` loop) as two, one per backend, so its
// halves run side by side too; the closing lines add them up.
//
//   npm test                       everything (what CI runs)
//   npm test -- FILE…              these files only (no Playwright)
//   npm test -- --changed          the files whose imports reach a file changed since `main`
//                                  (and Playwright when a page, component or e2e spec changed)
//   TEST_CONCURRENCY=N npm test    N files at a time
//   TEST_BACKENDS=pglite|postgres  one backend only (tests/support/database.ts)

/** Files that cannot share the machine with others, and why (docs/testing.md). */
const RUNS_ALONE: Record<string, string> = {
  "tests/unit/metrics-collector.test.ts": "measures this machine's CPU use while it runs a busy loop",
};

/** A file still running after this long is stopped and counted as failed. */
const FILE_TIMEOUT_MS = 15 * 60_000;

const durationsFile = path.join(".tmp", "test-durations.json");
const recordedDurations = "tests/durations.json";

/** One file's process: a file, on the backends TEST_BACKENDS gives it (null: as set here). */
interface Job {
  file: string;
  backend: string | null;
}

interface FileResult {
  name: string;
  seconds: number;
  /** CPU seconds of the file's process and of every process it waited for (null: not measured). */
  cpuSeconds: number | null;
  code: number;
  counts: Counts;
  /** Why it failed, in short (whyFailed); "" when it passed. */
  why: string;
}

interface Counts {
  tests: number;
  pass: number;
  fail: number;
  skipped: number;
  cancelled: number;
  todo: number;
}

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith(".test.ts") ? [full] : [];
  });
}

/** Seconds each file took in the last whole run here, or as recorded in the repository. */
function knownDurations(): Record<string, number> {
  for (const file of [durationsFile, recordedDurations]) {
    try {
      return JSON.parse(fs.readFileSync(file, "utf8"));
    } catch {
      // none here: try the next
    }
  }
  return {};
}

/** The closing "ℹ tests N" … lines of node's spec reporter. */
function countsOf(output: string): Counts {
  const count = (name: string) => Number(output.match(new RegExp(`^ℹ ${name} (\\d+)$`, "m"))?.[1] ?? 0);
  return { tests: count("tests"), pass: count("pass"), fail: count("fail"), skipped: count("skipped"), cancelled: count("cancelled"), todo: count("todo") };
}

/**
 * A failed file's reasons, short enough for the end of a CI log: the spec reporter's closing
 * "✖ failing tests:" part without its stack lines, or the output's last lines when the file died
 * before it could write that part.
 */
function whyFailed(output: string, ended: string): string {
  const marker = output.lastIndexOf("✖ failing tests:");
  const lines = marker === -1 ? [ended, ...output.trimEnd().split("\n").slice(-15)] : output.slice(marker).split("\n").filter((line) => !/^\s+at /.test(line));
  const kept = lines.slice(0, 40);
  if (lines.length > kept.length) kept.push(`… (${lines.length - kept.length} more lines above, in the file's whole output)`);
  return kept.join("\n");
}

const running = new Set<ChildProcess>();

const nameOf = (job: Job) => (job.backend ? `${job.file} (${job.backend})` : job.file);

/** The file as one job, or one per backend when each backend's half stands alone. */
function jobsOf(file: string, backends: string[]): Job[] {
  const source = fs.readFileSync(file, "utf8");
  const uses = source.match(/testBackends\(\)/g)?.length ?? 0;
  const loops = source.match(/for \(const backend of testBackends\(\)\)/g)?.length ?? 0;
  if (backends.length < 2 || uses === 0 || uses !== loops) return [{ file, backend: null }];
  return backends.map((backend) => ({ file, backend }));
}

/**
 * GNU time, which writes the CPU time of the process it runs and of every process that one
 * waited for (its servers, command-line runs, restic…; not daemons that left it), when installed.
 */
const GNU_TIME = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : null;
let jobsStarted = 0;

/** The user and system seconds GNU time wrote to `file`, summed; null when it wrote none. */
function cpuSecondsIn(file: string): number | null {
  try {
    const [user, system] = fs.readFileSync(file, "utf8").trim().split("\n").at(-1)!.split(" ").map(Number);
    return Number.isFinite(user + system) ? user + system : null;
  } catch {
    return null;
  } finally {
    fs.rmSync(file, { force: true });
  }
}

function runJob(job: Job): Promise<FileResult> {
  const { file } = job;
  const started = performance.now();
  const cpuFile = path.join(os.tmpdir(), `panel-test-cpu-${process.pid}-${jobsStarted++}`);
  // The file is run by node itself, as `node --test` runs each file in a process of its own, but
  // without that extra process around it (which loaded tsx too: 0.8 s of CPU a file).
  // Its own process group, so a file past its time is stopped with every process it started.
  // --test-force-exit: once its tests and hooks have run the file ends, even if a handle a failed
  // setup left open (a database connection) would keep it waiting for FILE_TIMEOUT_MS.
  // --liftoff-only: V8 compiles PGlite's WebAssembly with its baseline compiler only. A test file
  // is too short for the optimizing compiles to pay back; they cost a PGlite file 30 % more CPU.
  const nodeCommand = [process.execPath, "--liftoff-only", "--import", "tsx", "--test-force-exit", "--test-reporter=spec", file];
  const command = GNU_TIME ? [GNU_TIME, "--quiet", "--format=%U %S", `--output=${cpuFile}`, ...nodeCommand] : nodeCommand;
  const child = spawn(command[0], command.slice(1), {
    env: job.backend ? { ...process.env, TEST_BACKENDS: job.backend } : process.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  running.add(child);
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const timer = setTimeout(() => {
    output += `\n✖ ${nameOf(job)} was still running after ${FILE_TIMEOUT_MS / 60_000} minutes: stopped\n`;
    process.kill(-child.pid!, "SIGKILL");
  }, FILE_TIMEOUT_MS);
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      const seconds = (performance.now() - started) / 1000;
      const cpuSeconds = cpuSecondsIn(cpuFile);
      const counts = countsOf(output);
      const failed = code !== 0 || signal !== null;
      if (failed && counts.fail === 0) counts.fail = 1; // it died before it could count
      const cpu = cpuSeconds === null ? "" : ` (CPU ${cpuSeconds.toFixed(1)} s)`;
      process.stdout.write(`\n── ${nameOf(job)} ${failed ? "FAILED" : "passed"} in ${seconds.toFixed(1)} s${cpu}\n${output}`);
      resolve({ name: nameOf(job), seconds, cpuSeconds, code: failed ? 1 : 0, counts, why: failed ? whyFailed(output, signal ? `ended by ${signal}` : `exit code ${code}`) : "" });
    });
  });
}

/** Runs `jobs` `concurrency` at a time, in the given order. */
async function runPool(jobs: Job[], concurrency: number): Promise<FileResult[]> {
  const queue = [...jobs];
  const results: FileResult[] = [];
  const worker = async () => {
    for (let job = queue.shift(); job; job = queue.shift()) results.push(await runJob(job));
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
  return results;
}

function run(command: string, args: string[]): number {
  return spawnSync(command, args, { stdio: "inherit" }).status ?? 1;
}

function summarise(results: FileResult[], seconds: number) {
  const total = (name: keyof Counts) => results.reduce((sum, result) => sum + result.counts[name], 0);
  const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 10);
  console.log("\nSlowest files:");
  for (const result of slowest) console.log(`  ${result.seconds.toFixed(1).padStart(7)} s  ${result.name}`);
  const measured = results.filter((result) => result.cpuSeconds !== null);
  if (measured.length) {
    const busiest = [...measured].sort((a, b) => b.cpuSeconds! - a.cpuSeconds!).slice(0, 10);
    const cpuTotal = measured.reduce((sum, result) => sum + result.cpuSeconds!, 0);
    console.log(`Most CPU (${(cpuTotal / 60).toFixed(1)} CPU-min in all, the files and what they waited for):`);
    for (const result of busiest) console.log(`  ${result.cpuSeconds!.toFixed(1).padStart(7)} s  ${result.name}`);
  }
  const failed = results.filter((result) => result.code !== 0);
  for (const result of failed) console.log(`✖ failed: ${result.name}`);
  console.log(`ℹ processes ${results.length}, failed ${failed.length}, ${(seconds / 60).toFixed(1)} min`);
  for (const name of ["tests", "pass", "fail", "cancelled", "skipped", "todo"] as const) console.log(`ℹ ${name} ${total(name)}`);
  console.log(`node tests: ${total("pass")} passed, ${total("fail") + total("cancelled")} failed, ${total("skipped")} skipped`);
}

async function main() {
  const args = process.argv.slice(2);
  const changed = args.includes("--changed");
  const named = args.filter((arg) => !arg.startsWith("--"));
  const concurrency = Number(process.env.TEST_CONCURRENCY ?? 3);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`TEST_CONCURRENCY must be a whole number of 1 or more, not ${process.env.TEST_CONCURRENCY}`);

  buildIfNeeded();
  const all = testFiles("tests").sort();
  let files = named.length ? named : all;
  let withE2e = !named.length && fs.existsSync("e2e");
  if (changed) {
    const changedPaths = changedFiles();
    files = testsReaching(all, changedPaths);
    withE2e = changedPaths.some((file) => /^(app|components|e2e|lib|db)\//.test(file));
    console.log(`Changed since main: ${changedPaths.length} files; ${files.length} test files reach them${withE2e ? ", and the Playwright suite" : ""}.`);
  }

  const durations = knownDurations();
  const backends = (process.env.TEST_BACKENDS ?? "pglite,postgres").split(",").map((name) => name.trim()).filter(Boolean);
  const jobs = files.flatMap((file) => jobsOf(file, backends));
  const expected = (job: Job) => durations[nameOf(job)] ?? durations[job.file] ?? 60;
  const longestFirst = (a: Job, b: Job) => expected(b) - expected(a);
  const shared = jobs.filter((job) => !(job.file in RUNS_ALONE)).sort(longestFirst);
  const alone = jobs.filter((job) => job.file in RUNS_ALONE);

  const started = performance.now();
  const results = [...(await runPool(shared, concurrency)), ...(await runPool(alone, 1))];
  summarise(results, (performance.now() - started) / 1000);
  if (!named.length && !changed) {
    fs.mkdirSync(path.dirname(durationsFile), { recursive: true });
    fs.writeFileSync(durationsFile, `${JSON.stringify(Object.fromEntries(results.map((result) => [result.name, Math.round(result.seconds)]).sort()), null, 2)}\n`);
  }

  // The browser suite runs whatever the node files did: one CI run (half an hour) says all that fails.
  const nodeStatus = results.some((result) => result.code !== 0) ? 1 : 0;
  const hasE2e = withE2e && fs.readdirSync("e2e").some((name) => name.endsWith(".spec.ts"));
  const playwright = [process.execPath, path.join("node_modules", "@playwright", "test", "cli.js"), "test"];
  const timedPlaywright = GNU_TIME ? [GNU_TIME, "--quiet", "--format=browser suite: %e s, CPU %U s user + %S s system (Playwright, Chromium, the suite's server)", ...playwright] : playwright;
  const e2eStatus = hasE2e ? run(timedPlaywright[0], timedPlaywright.slice(1)) : 0;
  // Last, where a CI log's tail shows it: why each node file failed (its whole output is above).
  for (const result of results.filter((result) => result.code !== 0)) console.log(`\n✖ ${result.name} failed:\n${result.why}`);
  process.exit(nodeStatus || e2eStatus);
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    for (const child of running) process.kill(-child.pid!, "SIGTERM");
    process.exit(1);
  });
}

await main();
