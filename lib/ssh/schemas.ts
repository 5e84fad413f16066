import { z } from "zod";
import { timestamp } from "@/lib/http/operation";
import { SSH_KEY_TYPES } from "@/lib/provisioning/rules";

// Customer file access (DESIGN.md "Files and SSH"): SSH keys and the login password.

export const createSshKeyBodySchema = z.object({
  name: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .regex(/^[^\u0000-\u001f\u007f]+$/, "may not contain line breaks or control characters"),
  // One OpenSSH public key line; checked by parsePublicKey (lib/ssh/public-key.ts).
  public_key: z.string().max(16_384),
});

export const sshKeyRecordSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  type: z.enum(SSH_KEY_TYPES),
  fingerprint: z.string(),
  created_at: timestamp,
});
export type SshKeyRecord = z.infer<typeof sshKeyRecordSchema>;

export const sshKeyListSchema = z.object({ ssh_keys: z.array(sshKeyRecordSchema) });

export const MIN_PASSWORD_LENGTH = 12;

export const setPasswordBodySchema = z.object({
  password: z
    .string()
    .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
    .max(128)
    .regex(/^[^\u0000-\u001f\u007f]+$/, "may not contain line breaks or control characters")
    .refine((password) => password.trim().length > 0, "may not be only spaces"),
});
