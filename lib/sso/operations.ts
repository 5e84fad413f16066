import { z } from "zod";
import { defineOperation } from "@/lib/http/operation";

export const ssoTokenSchema = z.object({
  sso_url: z.url(),
  redirect_url: z.url(),
  token: z.string(),
});

export const ssoOperations = {
  generateToken: defineOperation({
    operationId: "generateSsoToken",
    method: "POST",
    path: "/api/admin/generate-sso-token",
    audience: "admin",
    tag: "Admin",
    summary: "Create a single-use sign-in link for the admin the key belongs to (expires after 60 s)",
    response: ssoTokenSchema,
    successStatus: 200,
    errorStatuses: [403, 500],
  }),
};
