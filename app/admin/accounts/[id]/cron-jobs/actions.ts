"use server";

import type { z } from "zod";
import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { createCronJobBodySchema, updateCronJobBodySchema } from "@/lib/cron/schemas";
import { createCronJob, deleteCronJob, updateCronJob } from "@/lib/cron/service";
import { idField } from "@/lib/http/operation";
import { accountPaths } from "../paths";

// Server actions of an account's Cron jobs pages: the services of /api/client/cron-jobs, with the
// admin session checked by runAdminFormAction. Each change installs the account's crontab.

export async function createCronJobAction(accountId: number, input: z.input<typeof createCronJobBodySchema>) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).cronJobs, (db) => createCronJob(db, account, createCronJobBodySchema.parse(input)));
}

export async function updateCronJobAction(accountId: number, jobId: number, input: z.input<typeof updateCronJobBodySchema>) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).cronJobs, (db) => updateCronJob(db, account, idField.parse(jobId), updateCronJobBodySchema.parse(input)));
}

export async function deleteCronJobAction(accountId: number, jobId: number) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).cronJobs, (db) => deleteCronJob(db, account, idField.parse(jobId)));
}
