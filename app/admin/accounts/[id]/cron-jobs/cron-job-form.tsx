"use client";

import type { z } from "zod";
import { AdminForm, CheckboxField, InputField, useAdminForm } from "@/components/form";
import { createCronJobBodySchema } from "@/lib/cron/schemas";
import { accountPaths } from "../paths";
import { createCronJobAction, updateCronJobAction } from "./actions";

/** A cron job of the account, new (no `jobId`) or changed: when it runs, what it runs, whether it runs. */
export function CronJobForm({ accountId, jobId, initial }: { accountId: number; jobId?: number; initial?: z.input<typeof createCronJobBodySchema> }) {
  const list = accountPaths(accountId).cronJobs;
  const { form, message, onSubmit } = useAdminForm({
    schema: createCronJobBodySchema,
    defaultValues: initial ?? { schedule: "", command: "", is_enabled: true },
    save: (values) => (jobId ? updateCronJobAction(accountId, jobId, values) : createCronJobAction(accountId, values)),
    doneHref: list,
    done: (values) => `Cron job “${values.schedule} ${values.command}” ${jobId ? "saved" : "added"}.`,
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel={jobId ? "Save Changes" : "Add cron job"} cancelHref={list}>
      <InputField
        form={form}
        name="schedule"
        label="Schedule"
        placeholder="*/5 * * * *"
        autoComplete="off"
        hint="Five fields — minute, hour, day of month, month, day of week — e.g. */5 * * * * for every five minutes; or @hourly, @daily, @weekly, @monthly."
      />
      <InputField
        form={form}
        name="command"
        label="Command"
        placeholder="php public_html/cron.php"
        autoComplete="off"
        className="wide"
        hint="One line, run as the account's user in its home; its output goes to the account's logs/cron.log."
      />
      <CheckboxField form={form} name="is_enabled" label="Enabled" hint="A disabled job is kept but does not run." />
    </AdminForm>
  );
}
