import fs from "node:fs";
import { SourceMap } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Summarises a V8 .cpuprofile (node --cpu-prof) of the panel's server: self time per group of
// code, grouped by the source file of each sampled frame. The production build bundles our code,
// drizzle and zod into .next/server/chunks/*.js, so frames there are traced back to their source
// through the chunk's source map first.
//
//   npx tsx bench/cpuprofile.ts FILE.cpuprofile [--from µs --to µs]
//
// --from/--to crop the samples to a window of the profile's clock (CLOCK_MONOTONIC on Linux, the
// clock of process.hrtime), so start-up and warm-up can be left out.
//
// Limits of what a sampling profile can say: V8 does not show JSON.stringify as a frame of its
// own (its time is its caller's: undici's Response.json); JSON.parse it does show.

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Groups in the order they are printed; the first rule that matches a frame wins. */
const GROUPS: { name: string; matches: (source: string, frame: CallFrame) => boolean }[] = [
  { name: "Next.js (routing, rendering, request/response)", matches: (s) => /node_modules\/next\//.test(s) },
  {
    name: "our auth (lib/auth, withApiKey, key secrets, addresses)",
    matches: (s) => /(^|\/)lib\/(auth\/|http\/with-api-key\.ts|http\/client-address\.ts|api-keys\/tokens\.ts|net\/)/.test(s),
  },
  { name: "our HTTP layer (lib/http: responses, operations)", matches: (s) => /(^|\/)lib\/http\//.test(s) },
  { name: "our routes and services (app/, lib/, db/)", matches: (s) => /(^|\/)(app|lib|db)\//.test(s) && !s.includes("node_modules") },
  { name: "server.ts (API route table, client address)", matches: (s) => /(^|\/)server\.ts$/.test(s) },
  { name: "drizzle-orm (query building, row mapping)", matches: (s) => s.includes("node_modules/drizzle-orm/") },
  { name: "postgres.js (protocol, parsing)", matches: (s) => s.includes("node_modules/postgres/") },
  { name: "PGlite (incl. WebAssembly)", matches: (s) => s.includes("@electric-sql/pglite") || s.startsWith("wasm://") },
  { name: "zod (request and response parsing)", matches: (s) => s.includes("node_modules/zod/") },
  { name: "JSON.parse (V8 builtin)", matches: (s, f) => s === "" && f.functionName === "parse" },
  { name: "undici (Web Request, Response, Headers, Response.json)", matches: (s) => s.startsWith("node:internal/deps/undici") },
  { name: "Node.js core (http, net, streams, timers)", matches: (s) => s.startsWith("node:") },
  { name: "garbage collection", matches: (_, f) => f.functionName === "(garbage collector)" },
  { name: "V8 and native code (unattributed)", matches: (_, f) => f.functionName === "(program)" },
  { name: "native functions (socket writes, microtasks, other builtins)", matches: (s) => s === "" },
  { name: "other packages", matches: (s) => s.includes("node_modules/") },
  { name: "other", matches: () => true },
];

const IDLE = "(idle)";

const sourceMaps = new Map<string, SourceMap | null>();

function sourceMapOf(file: string): SourceMap | null {
  if (!sourceMaps.has(file)) {
    let map: SourceMap | null = null;
    try {
      map = new SourceMap(JSON.parse(fs.readFileSync(`${file}.map`, "utf8")));
    } catch {
      // No map (a file that is its own source, or a build without maps).
    }
    sourceMaps.set(file, map);
  }
  return sourceMaps.get(file)!;
}

/** The frame's original source file (a chunk's through its source map), relative to the project. */
function sourceOf(frame: CallFrame, root: string): string {
  if (!frame.url.startsWith("file://") && !frame.url.startsWith("/")) return frame.url;
  const file = frame.url.startsWith("file://") ? fileURLToPath(frame.url) : frame.url;
  let source = file;
  if (file.includes(`${path.sep}.next${path.sep}`)) {
    const entry = sourceMapOf(file)?.findEntry(frame.lineNumber, frame.columnNumber);
    // Turbopack's sources are URL-encoded paths relative to the chunk ("../../../lib/env.ts").
    if (entry && "originalSource" in entry && entry.originalSource) {
      source = path.resolve(path.dirname(file), decodeURIComponent(entry.originalSource));
    }
  }
  return source.startsWith(root) ? path.relative(root, source) : source;
}

export interface ProfileSummary {
  /** Milliseconds of CPU (samples that were not idle) in the window. */
  totalMs: number;
  idleMs: number;
  groups: { name: string; ms: number; share: number }[];
  functions: { name: string; source: string; ms: number; share: number }[];
}

export function summariseProfile(
  profile: CpuProfile,
  window: { from?: number; to?: number } = {},
  root = process.cwd(),
): ProfileSummary {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfByNode = new Map<number, number>();
  let time = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    time += profile.timeDeltas[i];
    if (window.from !== undefined && time < window.from) continue;
    if (window.to !== undefined && time > window.to) break;
    // A sample stands for the time until the next one.
    const duration = profile.timeDeltas[i + 1] ?? 0;
    selfByNode.set(profile.samples[i], (selfByNode.get(profile.samples[i]) ?? 0) + duration);
  }

  const byGroup = new Map<string, number>();
  const byFunction = new Map<string, { name: string; source: string; ms: number }>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfByNode) {
    const frame = nodes.get(id)!.callFrame;
    if (frame.functionName === IDLE) {
      idleUs += us;
      continue;
    }
    totalUs += us;
    const source = sourceOf(frame, root);
    const group = GROUPS.find((candidate) => candidate.matches(source, frame))!.name;
    byGroup.set(group, (byGroup.get(group) ?? 0) + us);
    const where = source ? `${source}:${frame.lineNumber + 1}` : "";
    const name = frame.functionName || "(anonymous)";
    const key = `${name} ${where}`;
    const entry = byFunction.get(key) ?? { name, source: where, ms: 0 };
    entry.ms += us / 1000;
    byFunction.set(key, entry);
  }
  const share = (ms: number) => (totalUs ? ms / (totalUs / 1000) : 0);
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    groups: GROUPS.filter((group) => byGroup.has(group.name)).map((group) => {
      const ms = byGroup.get(group.name)! / 1000;
      return { name: group.name, ms, share: share(ms) };
    }),
    functions: [...byFunction.values()]
      .sort((a, b) => b.ms - a.ms)
      .map((entry) => ({ ...entry, share: share(entry.ms) })),
  };
}

/** Markdown tables: self time per group (and per request when `requests` is known), then the top functions. */
export function formatSummary(summary: ProfileSummary, requests?: number, topFunctions = 15): string {
  const perRequest = (ms: number) => (requests ? ` ${((ms * 1000) / requests).toFixed(0)} |` : "");
  const lines = [
    `CPU in the window: ${summary.totalMs.toFixed(0)} ms (idle ${summary.idleMs.toFixed(0)} ms)` +
      (requests ? `, ${requests} requests: ${((summary.totalMs * 1000) / requests).toFixed(0)} µs of CPU each` : ""),
    "",
    `| group (self time) | ms | share |${requests ? " µs/request |" : ""}`,
    `|---|---:|---:|${requests ? "---:|" : ""}`,
    ...summary.groups
      .slice()
      .sort((a, b) => b.ms - a.ms)
      .map((g) => `| ${g.name} | ${g.ms.toFixed(0)} | ${(g.share * 100).toFixed(1)} % |${perRequest(g.ms)}`),
    "",
    `| top functions (self time) | source | share |`,
    `|---|---|---:|`,
    ...summary.functions
      .slice(0, topFunctions)
      .map((f) => `| ${f.name} | ${f.source} | ${(f.share * 100).toFixed(1)} % |`),
  ];
  return lines.join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [file, ...options] = process.argv.slice(2);
  if (!file) {
    console.error("usage: npx tsx bench/cpuprofile.ts FILE.cpuprofile [--from µs] [--to µs]");
    process.exit(2);
  }
  const option = (name: string) => {
    const index = options.indexOf(name);
    return index >= 0 ? Number(options[index + 1]) : undefined;
  };
  const profile = JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile;
  console.log(formatSummary(summariseProfile(profile, { from: option("--from"), to: option("--to") })));
}
