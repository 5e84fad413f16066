// What must never reach a client (DESIGN.md "HTTP contract"): SQL, driver messages, stack frames,
// file paths. Every error and warning the suites receive through tests/support/http.ts is checked.

const INTERNALS: [string, RegExp][] = [
  ["a query", /Failed query|\bparams: |\b(?:select\b[\s\S]*\bfrom|insert into|delete from|update\s+"?\w+"?\s+set)\b/i],
  ["a driver message", /\b(?:ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOENT|EACCES|EPIPE|CONNECT_TIMEOUT|CONNECTION_CLOSED)\b|duplicate key|violates [\w ]*constraint|relation "|syntax error at/],
  ["a stack frame", /\n\s+at |\bat [\w.<>]+ \([^)]*:\d+:\d+\)/],
  ["a file path", /(?:^|[\s"'(=:])\/(?:usr|home|tmp|var|etc|opt|srv|root|work|proc|run)\/|node_modules|\.(?:ts|js|mjs|cjs):\d+/],
];

/** The kinds of internals `text` gives away (empty when none). */
export function internalsIn(text: string): string[] {
  return INTERNALS.filter(([, pattern]) => pattern.test(text)).map(([kind]) => kind);
}

/** Throws when an error or warning body gives internals away. */
export function assertNoInternals(what: string, text: string): void {
  const found = internalsIn(text);
  if (found.length) throw new Error(`${what} gives away ${found.join(", ")}: ${text.slice(0, 500)}`);
}
