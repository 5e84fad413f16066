import net from "node:net";

// The second check, where a value is rendered (STYLE.md "The outside world"). The panel runs as
// root and renders stored values later, from jobs and at start: a value an older version stored,
// or one written to the database directly, never went through today's request schemas. So every
// renderer (nginx server blocks, PHP-FPM pools, zone files; sshd drop-ins and crontab lines next)
// passes each value it writes through one of these checks.
//
// The rule: a rendered value holds only the characters its kind needs (an allow-list, never a
// list of bad characters), so it can never end its line, its quoted string, its directive or its
// block (no whitespace, control character, quote, backslash, `;`, `{`, `}`, `#`, `$`, `%`, `=`),
// never start an option (`-`), and a path never leaves the root it belongs to (no `.` or `..`
// component, no `//`, compared lexically: renderers are pure and never look at the disk).
//
// A refusal is a plain Error naming the renderer, the kind of value and the value (JSON-quoted,
// so a newline in it cannot forge a log line): a stored value that fails here is a server fault.
// Callers let it reach toErrorResponse (logged, answered 500 with a generic message) or log it
// and go on (jobs, start-up); it is never shown to a client.

const MAX_SHOWN = 120;

/** Throws the refusal of `value` as the `kind` of `renderer` ("nginx server block", "document root"). */
export function refuseRenderedValue(renderer: string, kind: string, value: unknown, rule: string): never {
  const shown = typeof value === "string" ? JSON.stringify(value.slice(0, MAX_SHOWN)) : String(value);
  throw new Error(`${renderer}: refused the ${kind} ${shown}: ${rule}`);
}

/** `value` when it is a string matching `pattern` (an allow-list), else the refusal naming `rule`. */
export function checkedString(renderer: string, kind: string, value: unknown, pattern: RegExp, rule: string): string {
  if (typeof value !== "string" || !pattern.test(value)) refuseRenderedValue(renderer, kind, value, rule);
  return value;
}

const CONFIG_TOKEN = /^[A-Za-z0-9_][A-Za-z0-9._:+-]{0,254}$/;

/** One bare word of a config line: letters, digits, `. _ : + -`, not starting with `-` or `.`. */
export function checkedConfigToken(renderer: string, kind: string, value: unknown): string {
  return checkedString(renderer, kind, value, CONFIG_TOKEN, "a config token holds only letters, digits and . _ : + - (not first: . -)");
}

const LABEL = "[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?";
const HOST_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/**
 * A host name: dot-separated labels of letters, digits, `_` and inner `-`, at most 253
 * characters. `wildcard` allows a first label `*` (a DNS record name); `finalDot` allows the
 * final dot of an absolute name (a zone file's targets).
 */
export function checkedHostName(
  renderer: string,
  kind: string,
  value: unknown,
  options: { wildcard?: boolean; finalDot?: boolean } = {},
): string {
  const rule = "a host name holds only letters, digits, _ and inner - in dot-separated labels";
  if (typeof value !== "string") refuseRenderedValue(renderer, kind, value, rule);
  const name = options.finalDot && value.endsWith(".") ? value.slice(0, -1) : value;
  if (options.wildcard && name === "*") return value;
  const labels = options.wildcard && name.startsWith("*.") ? name.slice(2) : name;
  if (name.length > 253 || !HOST_NAME.test(labels)) refuseRenderedValue(renderer, kind, value, rule);
  return value;
}

// Debian's adduser rule without its trailing `$` (Samba machine accounts): a `$` means a variable
// in PHP-FPM's and sshd's files.
const LINUX_NAME = /^[a-z_][a-z0-9_-]{0,31}$/;

/** A Linux user or group name: lower-case letters, digits, `_` and `-`, not first `-`, at most 32. */
export function checkedLinuxName(renderer: string, kind: string, value: unknown): string {
  return checkedString(renderer, kind, value, LINUX_NAME, "a user or group name holds only a-z, 0-9, _ and - (not first), at most 32");
}

// `/`, or components of one or more letters, digits and `. _ -`, each after a `/` and none of
// them `.` or `..`: so no empty component (`//`) and no final `/`.
const NORMAL_ABSOLUTE_PATH = /^(?:\/|(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9._-]+)+)$/;

/**
 * An absolute path in normal form, of letters, digits and `. _ - /` only: no `.` or `..`
 * component, no empty component, no final `/` (so a lexical comparison with a root is exact).
 */
export function checkedAbsolutePath(renderer: string, kind: string, value: unknown): string {
  const rule = "a path is absolute, of letters, digits and . _ - / only, with no . or .. component, // or final /";
  if (typeof value !== "string" || value.length > 4096 || !NORMAL_ABSOLUTE_PATH.test(value)) refuseRenderedValue(renderer, kind, value, rule);
  return value;
}

/** A path (checkedAbsolutePath) that is `root` or lies below it; `root` is checked the same way. */
export function checkedPathInside(renderer: string, kind: string, value: unknown, root: string): string {
  checkedAbsolutePath(renderer, `root of the ${kind}`, root);
  const checked = checkedAbsolutePath(renderer, kind, value);
  const prefix = root === "/" ? "/" : `${root}/`;
  if (checked !== root && !checked.startsWith(prefix)) refuseRenderedValue(renderer, kind, value, `it must lie inside ${root}`);
  return checked;
}

/** An integer in [min, max] (a JavaScript number: a string "80; x" is refused, not converted). */
export function checkedInteger(renderer: string, kind: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    refuseRenderedValue(renderer, kind, value, `it must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** A TCP or UDP port, 1–65535. */
export function checkedPort(renderer: string, kind: string, value: unknown): number {
  return checkedInteger(renderer, kind, value, 1, 65535);
}

/** An IPv4 address, or an IPv6 address without a zone index (`%eth0`). */
export function checkedIpAddress(renderer: string, kind: string, value: unknown, family: 4 | 6): string {
  const valid = typeof value === "string" && (family === 4 ? net.isIPv4(value) : net.isIPv6(value) && !value.includes("%"));
  if (!valid) refuseRenderedValue(renderer, kind, value, `it must be an IPv${family} address`);
  return value as string;
}
