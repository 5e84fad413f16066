import { z } from "zod";

const password = z.string().min(10, "must be at least 10 characters").max(200, "must be at most 200 characters");

export const createAdminSchema = z.object({
  email: z.email("is not a valid email address").trim().toLowerCase().max(255),
  name: z.string().trim().max(255).default(""),
  password,
});
export type CreateAdminInput = z.input<typeof createAdminSchema>;

/** The sign-in form's fields (the check of the password itself is next-auth's authorize). */
export const signInSchema = z.object({
  email: z.string().trim().min(1, "is required"),
  password: z.string().min(1, "is required"),
});

/** Whether an admin may sign in (admins page). */
export const adminStatusSchema = z.object({ is_enabled: z.boolean() });
export type AdminStatusInput = z.input<typeof adminStatusSchema>;

/** Another admin's new password (admins page, CLI). */
export const setPasswordSchema = z.object({ password });
export type SetPasswordInput = z.input<typeof setPasswordSchema>;

/** An admin's own new password: the current one proves it is them. */
export const changeOwnPasswordSchema = z.object({
  current_password: z.string().min(1, "is required"),
  password,
});
export type ChangeOwnPasswordInput = z.input<typeof changeOwnPasswordSchema>;

export const adminRecordSchema = z.object({
  id: z.number().int(),
  email: z.string(),
  name: z.string(),
  is_enabled: z.boolean(),
  created_at: z.string(),
});
export type AdminRecord = z.infer<typeof adminRecordSchema>;
