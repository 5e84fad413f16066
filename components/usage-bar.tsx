// What an account uses against its plan, as a bar: the share of the limit used (red past it),
// or the use alone when the plan sets no limit or nothing was measured.

const number = (value: number, digits: number) => value.toLocaleString("en-US", { maximumFractionDigits: digits });

/** "116 MB", "0.02 MB", "2 GB": sizes in MB from a GB up; other units as they are. */
export function amount(value: number, unit: string): string {
  if (unit === "MB" && value >= 1024) return `${number(value / 1024, 1)} GB`;
  return `${number(value, value > 0 && value < 1 ? 2 : 1)} ${unit}`;
}

export function UsageBar({ label, used, limit, unit }: { label: string; used: number | null; limit: number | null; unit: string }) {
  if (used === null) return <span className="muted">Not measured on this server</span>;
  if (limit === null) return <span>{amount(used, unit)} (no limit)</span>;
  const percent = limit === 0 ? 100 : Math.round((used / limit) * 100);
  const over = used > limit;
  return (
    <div className="usage">
      <div
        className={over ? "usage-bar over" : "usage-bar"}
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={limit}
        aria-valuenow={used}
        aria-valuetext={`${amount(used, unit)} of ${amount(limit, unit)}`}
      >
        <span style={{ width: `${Math.min(100, percent)}%` }} />
      </div>
      <span className={over ? "error" : undefined}>
        {amount(used, unit)} of {amount(limit, unit)} ({percent} %){over && " — over the plan's limit"}
      </span>
    </div>
  );
}
