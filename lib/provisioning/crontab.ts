import path from "node:path";
import { AppError, validationError } from "@/lib/errors";
import { checkedAbsolutePath, checkedLinuxName, refuseRenderedValue } from "./render-checks";
import { scheduleProblem } from "./rules";
import { type ChildExit, exitReason, runChild, toolEnv } from "./system";

// Each account's crontab (Debian `cron`), installed with `crontab -u <user> -` from the
// database: the jobs run as the account's user, in its home, their output appended to
// HOME/logs/cron.log (made by createHome, the account's, in its root-owned logs/). Schedules
// follow cron's own grammar (rules.ts scheduleProblem).

export interface CronLine {
  schedule: string;
  command: string;
}

const RENDERER = "crontab";

/** `'text'` for sh: a single quote becomes '\'' — nothing of the command is read by the shell running the line. */
const shellQuoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/**
 * cron's own reading of a command (crontab(5); Vixie cron's do_command.c, Debian's `cron`): an
 * unescaped `%` ends the command (the rest becomes its standard input), and a backslash escapes
 * the character after it — `\%` gives `%`, `\\` gives `\`, any other pair stays as it is. So
 * both are escaped: `%` alone would cut the line, and a command ending in `\` would turn the
 * escape of a following `%` into an escaped backslash and leave that `%` bare.
 */
const cronEscaped = (text: string) => text.replace(/[\\%]/g, "\\$&");

/**
 * The crontab of one account. Each value checked again here (render-checks.ts): a schedule
 * cron reads, a command on one line, escaped for cron (cronEscaped).
 */
export function renderCrontab(home: string, jobs: CronLine[]): string {
  checkedAbsolutePath(RENDERER, "home", home);
  const log = path.posix.join(home, "logs", "cron.log");
  const lines = [
    "# Written by the hosting panel from its database: manage cron jobs through the panel's API.",
    "SHELL=/bin/sh",
    'MAILTO=""',
  ];
  for (const job of jobs) {
    const problem = typeof job.schedule === "string" ? scheduleProblem(job.schedule) : "not text";
    if (problem) refuseRenderedValue(RENDERER, "schedule", job.schedule, problem);
    if (typeof job.command !== "string" || job.command.length === 0 || /[\u0000-\u001f\u007f]/.test(job.command)) {
      refuseRenderedValue(RENDERER, "command", job.command, "one line, no control characters");
    }
    const command = `cd ${shellQuoted(home)} && /bin/sh -c ${shellQuoted(job.command)} >> ${shellQuoted(log)} 2>&1`;
    lines.push(`${job.schedule} ${cronEscaped(command)}`);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * Runs crontab; `needed`: false when there is nothing to run (a server without cron then has
 * nothing to do). crontab's own words go to the panel's log; the answer names the jobs' command.
 */
async function crontab(args: string[], input: string, needed: boolean): Promise<void> {
  let exit: ChildExit;
  try {
    exit = await runChild("crontab", args, { env: toolEnv(), input, timeoutMs: 30_000 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && !needed) return;
    console.error(`[cron] crontab could not run: ${(error as Error).message}`);
    throw new AppError("VALIDATION", "Cron jobs are unavailable on this server (crontab could not run: Debian package cron)");
  }
  // `crontab -r` of a user without a crontab: nothing to remove.
  if (exit.code === 0 || (args.includes("-r") && /no crontab/i.test(exit.stderr))) return;
  console.error(`[cron] crontab ${args.join(" ")} failed: ${exitReason(exit)}`);
  throw validationError("command", "could not be installed: cron refused the account's jobs");
}

/** Installs the account's crontab (replacing the one it had); `jobs`: how many it holds. */
export async function installCrontab(username: string, contents: string, jobs: number): Promise<void> {
  await crontab(["-u", checkedLinuxName(RENDERER, "username", username), "--", "-"], contents, jobs > 0);
}

/** Removes the account's crontab; none (or no cron on the server) is fine. */
export async function removeCrontab(username: string): Promise<void> {
  await crontab(["-u", checkedLinuxName(RENDERER, "username", username), "-r"], "", false);
}
