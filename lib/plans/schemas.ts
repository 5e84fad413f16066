import { z } from "zod";

const quota = z.number().int().min(0).max(1_000_000).nullable();

export const createPlanSchema = z.object({
  name: z.string().trim().min(1).max(64),
  max_databases: quota.default(null),
  max_database_users: quota.default(null),
  max_domains: quota.default(null),
  max_dns_records: quota.default(null),
  disk_mb: quota.default(null),
});
export type CreatePlanInput = z.input<typeof createPlanSchema>;

export const updatePlanSchema = createPlanSchema.partial();
export type UpdatePlanInput = z.input<typeof updatePlanSchema>;
