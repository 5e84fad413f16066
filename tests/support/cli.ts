import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

// The `panel` command line as an operator runs it (`npm run panel -- …`): a subprocess.

/** What `npm run panel` runs: the command line's bundle (scripts/bundles.mjs), in plain Node. */
export const PANEL_SCRIPT = "scripts/panel.mjs";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The command line while it runs: its output so far, a wait for a line of it, its end. */
export interface RunningPanel {
  ended: Promise<CliResult>;
  output(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  stop(): void;
}

/**
 * Starts the CLI with `env` over this process's environment (a name given as undefined is left
 * out) and no configuration file unless `env` names one or leaves PANEL_ENV_FILE out.
 */
export function startPanel(env: Record<string, string | undefined>, ...args: string[]): RunningPanel {
  const child = spawn(process.execPath, [PANEL_SCRIPT, ...args], {
    env: { ...process.env, PANEL_ENV_FILE: "/dev/null", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const ended = new Promise<CliResult>((resolve) => child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr })));
  return {
    ended,
    output: () => stdout,
    async waitFor(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(stdout)) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no ${pattern} in:\n${stdout}\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    stop: () => child.kill("SIGTERM"),
  };
}

/** The CLI run to its end (as startPanel starts it). */
export function runPanel(env: Record<string, string | undefined>, ...args: string[]): Promise<CliResult> {
  return startPanel(env, ...args).ended;
}

/** A node machine's own directory under `root` for the command line run there (its DATA_DIR: seed, node.json, CA); no database. */
export function nodeDataDir(root: string, name: string) {
  const dir = path.join(root, `node-${name}-${Date.now()}`);
  fs.mkdirSync(dir, { recursive: true });
  return { DATA_DIR: dir, HOME_ROOT: path.join(dir, "home"), DATABASE_URL: undefined };
}
