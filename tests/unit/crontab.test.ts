import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { scheduleProblem } from "@/lib/provisioning/rules";
import { renderCrontab } from "@/lib/provisioning/crontab";

// Cron schedules as cron reads them, and the crontab renderer's own checks (fed directly, as a
// stored value from an older version or a direct database write would reach it).

test("schedules: five fields within their ranges, or a shorthand", () => {
  for (const good of ["* * * * *", "*/5 * * * *", "0 3 * * 1-5", "15,45 8-18/2 1 1,6,12 0", "@daily", "@hourly", "0 0 31 12 7"]) {
    assert.equal(scheduleProblem(good), null, good);
  }
  for (const [bad, why] of [
    ["* * * *", /five fields/],
    ["60 * * * *", /minute outside 0–59/],
    ["* 24 * * *", /hour outside/],
    ["* * 0 * *", /day of month outside/],
    ["* * * 13 *", /month outside/],
    ["* * * * 8", /day of week outside/],
    ["5-1 * * * *", /backwards/],
    ["*/0 * * * *", /step/],
    ["@reboot", /five fields/],
    ["* * * * * rm -rf /", /five fields/],
    ["a * * * *", /cannot read/],
    ["*\n* * * * *", /five fields|cannot read/],
  ] as const) {
    assert.match(scheduleProblem(bad) ?? "accepted", why, JSON.stringify(bad));
  }
});

/**
 * The command part of a crontab line as cron hands it to sh (Vixie cron's do_command.c, Debian's
 * cron): a backslash escapes `%` and `\`, any other pair stays; a bare `%` ends the command.
 */
function cronReads(commandPart: string): string {
  let out = "";
  for (let i = 0; i < commandPart.length; i++) {
    const ch = commandPart[i];
    if (ch === "\\" && i + 1 < commandPart.length) {
      const next = commandPart[++i];
      out += next === "%" || next === "\\" ? next : ch + next;
    } else if (ch === "%") break;
    else out += ch;
  }
  return out;
}

test("a crontab line runs the command in the home through sh -c, quoted, % and \\ escaped, output to logs/cron.log", () => {
  const text = renderCrontab("/home/alice", [{ schedule: "*/5 * * * *", command: "php wp-cron.php; date +%F 'x'" }]);
  const line = text.split("\n").find((candidate) => candidate.startsWith("*/5"))!;
  assert.equal(line, `*/5 * * * * cd '/home/alice' && /bin/sh -c 'php wp-cron.php; date +\\%F '\\\\''x'\\\\''' >> '/home/alice/logs/cron.log' 2>&1`);
  assert.match(text, /^MAILTO=""$/m);
});

test("whatever % and \\ a command holds, cron hands sh the whole line and sh runs the command as written", () => {
  for (const command of ["php wp-cron.php; date +%F 'x'", "echo a\\%", "echo 'a\\%b' c\\\\%d", "printf '%s\\n' 100% \\", "x\\"]) {
    const text = renderCrontab("/home/alice", [{ schedule: "@daily", command }]);
    const commandPart = text.split("\n").find((candidate) => candidate.startsWith("@daily"))!.slice("@daily ".length);
    const line = cronReads(commandPart);
    assert.match(line, / >> '\/home\/alice\/logs\/cron\.log' 2>&1$/, `${command}: the line is whole`);
    const quoted = line.replace(/ >> .*$/, "").replace(/^cd '[^']*' && \/bin\/sh -c /, "");
    assert.equal(execFileSync("sh", ["-c", `printf '%s' ${quoted}`], { encoding: "utf8" }), command);
  }
});

test("the renderer refuses hostile stored values: a line break in a command or schedule, a schedule cron cannot read", () => {
  for (const command of ["touch x\n* * * * * root rm -rf /", "a\rb", "", "x\u0000"]) {
    assert.throws(() => renderCrontab("/home/alice", [{ schedule: "* * * * *", command }]), /crontab: refused the command/);
  }
  for (const schedule of ["* * * * *\n* * * * *", "61 * * * *", "@reboot", "MAILTO=x"]) {
    assert.throws(() => renderCrontab("/home/alice", [{ schedule, command: "true" }]), /crontab: refused the schedule/);
  }
  assert.throws(() => renderCrontab("home/alice", []), /crontab: refused the home/);
});
