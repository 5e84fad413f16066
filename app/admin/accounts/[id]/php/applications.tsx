"use client";

import { useState } from "react";
import { useAdminAction } from "@/components/form";
import type { PhpSettings } from "@/lib/php-settings/schemas";
import { updatePhpSettingsAction } from "../../actions";

const NUMBER_FIELDS = [
  ["upload_max_filesize_mb", "Upload size (MB)"],
  ["post_max_size_mb", "POST size (MB)"],
  ["memory_limit_mb", "Memory limit (MB)"],
  ["max_execution_time_s", "Execution time (s)"],
  ["max_input_vars", "Input variables"],
] as const;

/** The settings as a sentence names them: the service's messages name the API's fields. */
const IN_WORDS: Record<string, string> = {
  upload_max_filesize_mb: "the upload size",
  post_max_size_mb: "the POST size",
  memory_limit_mb: "the memory limit",
  max_execution_time_s: "the execution time",
  max_input_vars: "the number of input variables",
};
const inWords = (message: string) => message.replace(/\b[a-z_]+_(mb|s|vars)\b/g, (name) => IN_WORDS[name] ?? name);

/** The account's PHP settings, in every pool of its sites (within its plan's maxima). */
export function Applications({ accountId, php }: { accountId: number; php: PhpSettings }) {
  const { pending, state, fieldError, run } = useAdminAction();
  const [values, setValues] = useState(php);

  return (
    <section className="card" style={{ marginTop: "1.5rem" }} aria-labelledby="applications-heading">
      <h2 id="applications-heading">PHP settings</h2>
      {state?.error && !state.fieldErrors && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      <form
        aria-label="PHP settings"
        onSubmit={(event) => {
          event.preventDefault();
          run(() => updatePhpSettingsAction(accountId, values), undefined, "PHP settings saved.");
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
              aria-describedby={fieldError(name) ? `php-${name}-error` : undefined}
              onChange={(event) => setValues({ ...values, [name]: Number(event.target.value) })}
            />
            {fieldError(name) && (
              <div className="error" id={`php-${name}-error`}>
                {label} {inWords(fieldError(name)!)}
              </div>
            )}
          </div>
        ))}
        <div className="field">
          <label className="check">
            <input type="checkbox" checked={values.display_errors} onChange={(event) => setValues({ ...values, display_errors: event.target.checked })} /> Show
            PHP errors in the pages (they are always written to the account&apos;s logs/php-error.log)
          </label>
        </div>
        <button type="submit" disabled={pending}>
          Save PHP settings
        </button>
      </form>
    </section>
  );
}
