import { z } from "zod";

export const createAdminSchema = z.object({
  email: z.email().trim().toLowerCase().max(255),
  name: z.string().trim().max(255).default(""),
  password: z.string().min(10, "must be at least 10 characters").max(200),
});
export type CreateAdminInput = z.input<typeof createAdminSchema>;

/** The sign-in form's fields (the check of the password itself is next-auth's authorize). */
export const signInSchema = z.object({
  email: z.string().trim().min(1, "is required"),
  password: z.string().min(1, "is required"),
});

export const adminRecordSchema = z.object({
  id: z.number().int(),
  email: z.string(),
  name: z.string(),
  created_at: z.string(),
});
export type AdminRecord = z.infer<typeof adminRecordSchema>;
