import { z } from "zod";
import { isKnownEndpoint } from "@/lib/http/registry";
import { endpointsRefusedFor } from "./endpoints";
import { timestamp } from "@/lib/http/operation";
import { type ListQuery, listQuerySchema } from "@/lib/list-query";
import { addressOrCidrError } from "@/lib/net/ip-syntax";

export const apiKeyScopes = ["admin", "reseller", "account"] as const;

const ipEntry = z
  .string()
  .trim()
  .superRefine((entry, ctx) => {
    const error = addressOrCidrError(entry);
    if (error) ctx.addIssue({ code: "custom", message: error });
  });

const endpointEntry = z
  .string()
  .trim()
  .refine(isKnownEndpoint, { message: "is not an operation of this API" });

const apiKeyFields = z.object({
  name: z.string().trim().min(1, "Name is required").max(100),
  is_enabled: z.boolean(),
  allowed_ips: z.array(ipEntry).max(100),
  allow_all_endpoints: z.boolean(),
  allowed_endpoints: z.array(endpointEntry),
  scope: z.enum(apiKeyScopes),
  reseller_id: z.number().int().positive().nullable(),
  account_id: z.number().int().positive().nullable(),
});

type ApiKeyFields = z.infer<typeof apiKeyFields>;

function checkConsistency(key: Partial<ApiKeyFields>, ctx: z.RefinementCtx) {
  if (key.scope === "reseller" && !key.reseller_id) {
    ctx.addIssue({ code: "custom", path: ["reseller_id"], message: "Choose the reseller" });
  }
  if (key.scope === "account" && !key.account_id) {
    ctx.addIssue({ code: "custom", path: ["account_id"], message: "Choose the hosting account" });
  }
  if (key.allow_all_endpoints === false && key.allowed_endpoints?.length === 0) {
    ctx.addIssue({
      code: "custom",
      path: ["allowed_endpoints"],
      message: "Select at least one endpoint, or allow all endpoints",
    });
  }
  const refused = key.scope && key.allow_all_endpoints === false && key.allowed_endpoints ? endpointsRefusedFor(key.scope, key.allowed_endpoints) : null;
  if (refused) ctx.addIssue({ code: "custom", path: ["allowed_endpoints"], message: refused });
}

/** Create form, CLI and service input. Enable and Allow all endpoints start on. */
export const createApiKeySchema = apiKeyFields
  .extend({
    is_enabled: apiKeyFields.shape.is_enabled.default(true),
    allowed_ips: apiKeyFields.shape.allowed_ips.default([]),
    allow_all_endpoints: apiKeyFields.shape.allow_all_endpoints.default(true),
    allowed_endpoints: apiKeyFields.shape.allowed_endpoints.default([]),
    reseller_id: apiKeyFields.shape.reseller_id.default(null),
    account_id: apiKeyFields.shape.account_id.default(null),
  })
  .superRefine(checkConsistency);
export type CreateApiKeyInput = z.input<typeof createApiKeySchema>;

/** Edit: every field optional; the scope's target is checked against the stored key. */
export const updateApiKeySchema = apiKeyFields.partial().superRefine(checkConsistency);
export type UpdateApiKeyInput = z.input<typeof updateApiKeySchema>;

/** The key list's query: the one shape of every admin list (search, page, per_page). */
export const apiKeyListQuerySchema = listQuerySchema;
export type ApiKeyListQuery = ListQuery;

/** A key as the panel shows it: the secret only masked. */
export const apiKeyRecordSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  key: z.string(),
  secret_masked: z.string(),
  scope: z.enum(apiKeyScopes),
  reseller_id: z.number().int().nullable(),
  reseller_username: z.string().nullable(),
  account_id: z.number().int().nullable(),
  account_username: z.string().nullable(),
  // The admin an admin key belongs to (null: a command-line key without an owner, or not an admin key).
  owner_email: z.string().nullable(),
  is_enabled: z.boolean(),
  allowed_ips: z.array(z.string()),
  allow_all_endpoints: z.boolean(),
  allowed_endpoints: z.array(z.string()),
  last_used_at: timestamp.nullable(),
  last_used_ip: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type ApiKeyRecord = z.infer<typeof apiKeyRecordSchema>;

/** The one answer that carries the secret: right after creation. */
export const createdApiKeySchema = apiKeyRecordSchema.extend({ secret: z.string() });
export type CreatedApiKey = z.infer<typeof createdApiKeySchema>;
