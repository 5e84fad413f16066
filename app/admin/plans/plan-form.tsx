"use client";

import { AdminForm, InputField, numberOrNull, useAdminForm } from "@/components/form";
import { type CreatePlanInput, createPlanSchema } from "@/lib/plans/schemas";
import { createPlanAction, updatePlanAction } from "./actions";

const quotas = [
  { name: "max_domains", label: "Domains" },
  { name: "max_databases", label: "Databases" },
  { name: "max_database_users", label: "Database users" },
  { name: "max_dns_records", label: "DNS records" },
  { name: "disk_mb", label: "Disk space (MB)" },
  { name: "max_php_memory_mb", label: "PHP memory limit at most (MB)" },
  { name: "max_php_upload_mb", label: "PHP upload size at most (MB)" },
  { name: "max_cron_jobs", label: "Cron jobs" },
  { name: "mailboxes", label: "Mailboxes" },
  { name: "mail_quota_mb", label: "Mail quota, all mailboxes (MB)" },
  { name: "mail_per_hour", label: "Mail sent per hour (recipients, per account)" },
  { name: "mail_per_day", label: "Mail sent per day (recipients, per account)" },
] as const;

/** Create and edit of a plan: its name and quotas (empty = unlimited). */
export function PlanForm({ planId, initial }: { planId?: number; initial?: CreatePlanInput }) {
  const { form, message, onSubmit } = useAdminForm({
    schema: createPlanSchema,
    defaultValues: initial ?? { name: "" },
    save: (values) => (planId ? updatePlanAction(planId, values) : createPlanAction(values)),
    doneHref: "/admin/plans",
    done: (values) => `Plan ${values.name} ${planId ? "saved" : "created"}.`,
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel={planId ? "Save Changes" : "Create"} cancelHref="/admin/plans">
      <fieldset>
        <legend>Plan Details</legend>
        <InputField form={form} name="name" label="Name" hint="Shown to admins and resellers, e.g. “Business”." />
      </fieldset>
      <fieldset>
        <legend>Quotas</legend>
        <p className="hint">Leave a quota empty for unlimited. Accounts on this plan cannot create more than these.</p>
        <div className="form-grid">
          {quotas.map((quota) => (
            <InputField
              key={quota.name}
              form={form}
              name={quota.name}
              label={quota.label}
              type="number"
              min={0}
              step={1}
              inputMode="numeric"
              placeholder="Unlimited"
              options={numberOrNull}
            />
          ))}
        </div>
      </fieldset>
    </AdminForm>
  );
}
