"use client";

import { useState } from "react";
import { useAdminAction } from "@/components/form";
import type { CronJobRecord } from "@/lib/cron/schemas";
import type { PhpSettings } from "@/lib/php-settings/schemas";
import { deleteCronJobAction, updatePhpSettingsAction } from "../../actions";

const NUMBER_FIELDS = [
  ["upload_max_filesize_mb", "Upload size (MB)"],
  ["post_max_size_mb", "POST size (MB)"],
  ["memory_limit_mb", "Memory limit (MB)"],
  ["max_execution_time_s", "Execution time (s)"],
  ["max_input_vars", "Input variables"],
] as const;

/** The account's PHP settings (within its plan's maxima) and its cron jobs. */
export function Applications({ accountId, php, cronJobs }: { accountId: number; php: PhpSettings; cronJobs: CronJobRecord[] }) {
  const { pending, state, fieldError, run } = useAdminAction();
  const [values, setValues] = useState(php);

  return (
    <section className="card" style={{ marginTop: "1.5rem" }} aria-labelledby="applications-heading">
      <h2 id="applications-heading">PHP settings and cron jobs</h2>
      {state?.error && !state.fieldErrors && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      <form
        aria-label="PHP settings"
        onSubmit={(event) => {
          event.preventDefault();
          run(() => updatePhpSettingsAction(accountId, values));
        }}
      >
        {NUMBER_FIELDS.map(([name, label]) => (
          <div className="field" key={name}>
            <label htmlFor={`php-${name}`}>{label}</label>
            <input
              id={`php-${name}`}
              type="number"
              value={values[name]}
              aria-invalid={fieldError(name) ? true : undefined}
              onChange={(event) => setValues({ ...values, [name]: Number(event.target.value) })}
            />
            {fieldError(name) && <div className="error">{fieldError(name)}</div>}
          </div>
        ))}
        <div className="field">
          <label>
            <input type="checkbox" checked={values.display_errors} onChange={(event) => setValues({ ...values, display_errors: event.target.checked })} />{" "}
            Show PHP errors in pages (display_errors; they are always in the account's logs/php-error.log)
          </label>
        </div>
        <button type="submit" disabled={pending}>
          Save PHP settings
        </button>
      </form>
      <h3>Cron jobs</h3>
      <div className="table-scroll">
        <table className="data">
          <thead>
            <tr>
              <th>Schedule</th>
              <th>Command</th>
              <th>Enabled</th>
              <th aria-label="Actions" />
            </tr>
          </thead>
          <tbody>
            {cronJobs.length === 0 && (
              <tr>
                <td colSpan={4} className="muted">
                  No cron jobs (the customer adds them through /api/client/cron-jobs).
                </td>
              </tr>
            )}
            {cronJobs.map((job) => (
              <tr key={job.id}>
                <td>
                  <code>{job.schedule}</code>
                </td>
                <td>
                  <code>{job.command}</code>
                </td>
                <td>{job.is_enabled ? "Yes" : "No"}</td>
                <td>
                  <button type="button" disabled={pending} aria-label={`Remove the cron job ${job.command}`} onClick={() => run(() => deleteCronJobAction(accountId, job.id))}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
