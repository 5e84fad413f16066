import { defineOperation } from "@/lib/http/operation";
import { phpSettingsRecordSchema, updatePhpSettingsSchema } from "./schemas";

const tag = "PHP settings";

export const phpSettingsOperations = {
  get: defineOperation({
    operationId: "getPhpSettings",
    method: "GET",
    path: "/api/client/php-settings",
    audience: "client",
    tag,
    summary: "The account's PHP settings (upload and post size, memory, time, input vars, display_errors)",
    response: phpSettingsRecordSchema,
    successStatus: 200,
    errorStatuses: [404],
  }),
  update: defineOperation({
    operationId: "updatePhpSettings",
    method: "PUT",
    path: "/api/client/php-settings",
    audience: "client",
    tag,
    summary: "Change PHP settings within the plan's maxima; live in every pool and site when answered",
    body: updatePhpSettingsSchema,
    response: phpSettingsRecordSchema,
    successStatus: 200,
    errorStatuses: [400, 404, 422],
  }),
};
