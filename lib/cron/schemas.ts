import { z } from "zod";
import { timestamp } from "@/lib/http/operation";
import { scheduleProblem } from "@/lib/provisioning/rules";

// An account's cron jobs (DESIGN.md "Running applications").

const schedule = z
  .string()
  .trim()
  .transform((value) => value.replace(/\s+/g, " "))
  .superRefine((value, ctx) => {
    const problem = scheduleProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

const command = z
  .string()
  .trim()
  .min(1, "is required")
  .max(1000)
  .regex(/^[^\u0000-\u001f\u007f]+$/, "must be one line (no line breaks or control characters)");

export const createCronJobBodySchema = z.object({ schedule, command, is_enabled: z.boolean().default(true) }).strict();
export const updateCronJobBodySchema = z.object({ schedule, command, is_enabled: z.boolean() }).partial().strict();

export const cronJobRecordSchema = z.object({
  id: z.number().int(),
  schedule: z.string(),
  command: z.string(),
  is_enabled: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type CronJobRecord = z.infer<typeof cronJobRecordSchema>;
