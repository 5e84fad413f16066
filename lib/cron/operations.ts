import { z } from "zod";
import { defineOperation, idParams, messageResponse } from "@/lib/http/operation";
import { createCronJobBodySchema, cronJobRecordSchema, updateCronJobBodySchema } from "./schemas";

const tag = "Cron jobs";

export const cronOperations = {
  list: defineOperation({
    operationId: "listCronJobs",
    method: "GET",
    path: "/api/client/cron-jobs",
    audience: "client",
    tag,
    summary: "The account's cron jobs",
    response: z.array(cronJobRecordSchema),
    successStatus: 200,
    errorStatuses: [404],
  }),
  create: defineOperation({
    operationId: "createCronJob",
    method: "POST",
    path: "/api/client/cron-jobs",
    audience: "client",
    tag,
    summary: "Add a cron job: a schedule and a command run as the account's user in its home",
    body: createCronJobBodySchema,
    response: cronJobRecordSchema,
    successStatus: 201,
    errorStatuses: [400, 404, 422],
  }),
  update: defineOperation({
    operationId: "updateCronJob",
    method: "PUT",
    path: "/api/client/cron-jobs/{id}",
    audience: "client",
    tag,
    summary: "Change a cron job's schedule, command or is_enabled",
    params: idParams,
    body: updateCronJobBodySchema,
    response: cronJobRecordSchema,
    successStatus: 200,
    errorStatuses: [400, 404, 422],
  }),
  delete: defineOperation({
    operationId: "deleteCronJob",
    method: "DELETE",
    path: "/api/client/cron-jobs/{id}",
    audience: "client",
    tag,
    summary: "Remove a cron job",
    params: idParams,
    response: messageResponse,
    successStatus: 200,
    errorStatuses: [404, 422],
  }),
};
