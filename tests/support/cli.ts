import { spawn } from "node:child_process";

// The `panel` command line as an operator runs it (`npm run panel -- …`): a subprocess.

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The CLI with `env` over this process's environment (a name given as undefined is left out) and
 * no configuration file unless `env` names one or leaves PANEL_ENV_FILE out.
 */
export function runPanel(env: Record<string, string | undefined>, ...args: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, ["--import", "tsx", "lib/cli/main.ts", ...args], {
    env: { ...process.env, PANEL_ENV_FILE: "/dev/null", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr })));
}
