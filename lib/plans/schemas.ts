import { z } from "zod";
import type { planSchema } from "@/lib/accounts/schemas";

// Quotas: null means unlimited.
const quota = z.number("must be a number").int("must be a whole number").min(0, "must be 0 or more").max(1_000_000, "must be at most 1000000").nullable();

const planFields = z.object({
  name: z.string().trim().min(1, "is required").max(64, "must be at most 64 characters"),
  max_databases: quota,
  max_database_users: quota,
  max_domains: quota,
  max_dns_records: quota,
  disk_mb: quota,
  max_php_memory_mb: quota,
  max_php_upload_mb: quota,
  max_cron_jobs: quota,
  mailboxes: quota,
  mail_quota_mb: quota,
  mail_per_hour: quota,
  mail_per_day: quota,
});

/** Create (CLI, admin UI): a quota left out is unlimited. */
export const createPlanSchema = planFields.extend({
  max_databases: quota.default(null),
  max_database_users: quota.default(null),
  max_domains: quota.default(null),
  max_dns_records: quota.default(null),
  disk_mb: quota.default(null),
  max_php_memory_mb: quota.default(null),
  max_php_upload_mb: quota.default(null),
  max_cron_jobs: quota.default(null),
  mailboxes: quota.default(null),
  mail_quota_mb: quota.default(null),
  mail_per_hour: quota.default(null),
  mail_per_day: quota.default(null),
});
export type CreatePlanInput = z.input<typeof createPlanSchema>;

/** Partial update: a field left out keeps its value (no defaults here, so none is reset). */
export const updatePlanSchema = planFields.partial();
export type UpdatePlanInput = z.input<typeof updatePlanSchema>;

export type PlanRecord = z.infer<typeof planSchema>;

/** A row of the admin list: the plan and how many hosting accounts are on it. */
export type PlanListRow = PlanRecord & { account_count: number };
