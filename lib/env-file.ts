import fs from "node:fs";
import path from "node:path";
import { ConfigError, settingNames } from "@/lib/env";

// The panel's one configuration file, read by the server (server.ts) and the command line
// (lib/cli/main.ts) alike, so that `npm run panel` finds the database `npm start` uses. A variable
// already set in the environment, even to an empty string, wins over the file. See
// docs/configuration.md "Configuration".

/** In the working directory, which `npm start` and `npm run panel` set to the project's, as for `./data`. */
export const DEFAULT_ENV_FILE = "panel.env";

/** Settings the file may hold besides the panel's own (lib/env.ts). */
const OTHER_ALLOWED_NAMES = ["NODE_ENV", "TZ"];

export interface EnvFile {
  path: string;
  /** False when the default file is absent (then nothing was read). */
  found: boolean;
}

/** PANEL_ENV_FILE, else `panel.env` in the working directory. */
export function envFilePath(source: Record<string, string | undefined> = process.env): { path: string; named: boolean } {
  const named = source.PANEL_ENV_FILE?.trim();
  return named ? { path: path.resolve(named), named: true } : { path: path.resolve(DEFAULT_ENV_FILE), named: false };
}

/**
 * `KEY=VALUE` lines, blank lines and `#` comment lines; nothing else. A value is the rest of the
 * line, trimmed, or the text between matching single or double quotes, taken literally. What
 * dotenv, systemd and Node's own parser read differently is refused rather than guessed: a `#`
 * in an unquoted value (a comment to dotenv, a character to systemd), a backslash or an inner
 * quote inside quotes (an escape to some), `export`, a name set twice, an unknown name (a typo
 * would otherwise be ignored in silence).
 */
export function parseEnvFile(text: string, fileName: string): Map<string, string> {
  const values = new Map<string, string>();
  const lineOf = new Map<string, number>();
  const known = new Set([...settingNames, ...OTHER_ALLOWED_NAMES]);
  text.split(/\r?\n/).forEach((rawLine, index) => {
    const lineNumber = index + 1;
    const fail = (message: string): never => {
      throw new ConfigError(`Invalid configuration file ${fileName}, line ${lineNumber}: ${message}`);
    };
    const line = rawLine.trim();
    if (line === "" || line.startsWith("#")) return;
    const match = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) fail("expected NAME=value");
    const [, name, rawValue] = match!;
    if (!known.has(name)) fail(`unknown setting ${name} (the settings are listed in README.md "Configuration")`);
    if (lineOf.has(name)) fail(`${name} is already set on line ${lineOf.get(name)}`);
    let value = rawValue;
    const quote = value[0];
    if (quote === '"' || quote === "'") {
      if (value.length < 2 || !value.endsWith(quote)) fail(`the value of ${name} opens a quote it does not close`);
      value = value.slice(1, -1);
      if (value.includes(quote) || value.includes("\\")) {
        fail(`the value of ${name} holds a quote or a backslash inside quotes; use the other quote`);
      }
    } else if (value.includes("#")) {
      fail(`quote the value of ${name}: it holds a #, which some readers take for a comment`);
    } else if (value.includes('"') || value.includes("'")) {
      fail(`the value of ${name} holds a quote; quote the whole value`);
    }
    values.set(name, value);
    lineOf.set(name, lineNumber);
  });
  return values;
}

/**
 * The file holds passwords (MYSQL_PROVISION_URL, DATABASE_URL, AUTH_SECRET) and commands root
 * runs (NGINX_TEST_COMMAND…): a file its group or others may read, or that another user owns
 * (who could change it), stops the start. A file that is not a regular file (/dev/null in tests)
 * has no such mode to check.
 */
function assertPrivate(fd: number, filePath: string): void {
  const stat = fs.fstatSync(fd);
  if (!stat.isFile()) return;
  if ((stat.mode & 0o077) !== 0) {
    throw new ConfigError(
      `The configuration file ${filePath} may be read by others than its owner (mode ${(stat.mode & 0o777).toString(8)}), and it holds passwords: chmod 600 ${filePath}`,
    );
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid && stat.uid !== 0) {
    throw new ConfigError(`The configuration file ${filePath} belongs to uid ${stat.uid}, who could change what the panel runs: chown ${uid} ${filePath}`);
  }
}

/**
 * Reads the file into `target` (process.env) for every name not already set there. Call it
 * first thing in an entry point, before anything reads the configuration (env()). A file named
 * by PANEL_ENV_FILE must exist; the default one may be absent. Its mode and owner are checked
 * first (assertPrivate).
 */
export function loadEnvFile(target: Record<string, string | undefined> = process.env): EnvFile {
  const { path: filePath, named } = envFilePath(target);
  const cannotRead = (error: unknown) =>
    new ConfigError(`Cannot read the configuration file ${filePath}${named ? " (PANEL_ENV_FILE)" : ""}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  let fd: number;
  try {
    fd = fs.openSync(filePath, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && !named) return { path: filePath, found: false };
    throw cannotRead(error);
  }
  let text: string;
  try {
    assertPrivate(fd, filePath);
    text = fs.readFileSync(fd, "utf8");
  } catch (error) {
    throw error instanceof ConfigError ? error : cannotRead(error);
  } finally {
    fs.closeSync(fd);
  }
  for (const [name, value] of parseEnvFile(text, filePath)) {
    if (target[name] === undefined) target[name] = value;
  }
  return { path: filePath, found: true };
}
