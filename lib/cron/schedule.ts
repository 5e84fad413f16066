// Cron schedules as Debian's cron reads them: five fields (minute, hour, day of month, month,
// day of week) of numbers, `*`, ranges `a-b`, lists `a,b` and steps `/n`, or one of the
// shorthands. Checked field by field against each field's range, so a schedule the panel
// accepts is one cron runs (and nothing else ever reaches a crontab line).

export const SCHEDULE_SHORTHANDS = ["@hourly", "@daily", "@weekly", "@monthly", "@yearly"] as const;

const FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day of week", min: 0, max: 7 },
] as const;

const ITEM = /^(\*|(\d{1,2})(?:-(\d{1,2}))?)(?:\/(\d{1,2}))?$/;

/** Why `schedule` is not one cron runs, or null when it is. */
export function scheduleProblem(schedule: string): string | null {
  if ((SCHEDULE_SHORTHANDS as readonly string[]).includes(schedule)) return null;
  const fields = schedule.split(" ");
  if (fields.length !== 5) return `must be five fields ("*/5 * * * *") or one of ${SCHEDULE_SHORTHANDS.join(", ")}`;
  for (const [index, field] of fields.entries()) {
    const { name, min, max } = FIELDS[index];
    for (const item of field.split(",")) {
      const match = ITEM.exec(item);
      if (!match) return `has a ${name} field cron cannot read: "${field}"`;
      const [, , from, to, step] = match;
      const numbers = [from, to].filter((value) => value !== undefined).map(Number);
      if (numbers.some((value) => value < min || value > max)) return `has a ${name} outside ${min}–${max}: "${field}"`;
      if (numbers.length === 2 && numbers[0] > numbers[1]) return `has a ${name} range that runs backwards: "${field}"`;
      if (step !== undefined && (Number(step) < 1 || Number(step) > max)) return `has a ${name} step outside 1–${max}: "${field}"`;
    }
  }
  return null;
}
