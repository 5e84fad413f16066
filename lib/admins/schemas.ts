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
  // Asked for once the server answers that this admin has two-factor sign-in (TWO_FACTOR_REQUIRED).
  code: z.string().trim().max(64).optional(),
});

/** next-auth's error for a right password of an admin with two-factor sign-in, sent without a code. */
export const TWO_FACTOR_REQUIRED = "TwoFactorRequired";
/** next-auth's error for a wrong (or already used) code after a right password. */
export const TWO_FACTOR_WRONG = "Wrong or already used code.";

/** A code from the authenticator app (six digits) or a recovery code. */
const secondFactorCode = z.string().trim().min(1, "is required").max(64);

/** Confirms two-factor set-up: a code from the new secret. */
export const confirmTwoFactorSchema = z.object({ code: z.string().trim().regex(/^[0-9]{6}$/, "must be the six digits the app shows") });
export type ConfirmTwoFactorInput = z.input<typeof confirmTwoFactorSchema>;

/** Turns one's own two-factor sign-in off: password and a current code (or a recovery code). */
export const disableTwoFactorSchema = z.object({ password: z.string().min(1, "is required"), code: secondFactorCode });
export type DisableTwoFactorInput = z.input<typeof disableTwoFactorSchema>;

/** New recovery codes: the same proof as turning it off, password and a current code (or a recovery code). */
export const renewRecoveryCodesSchema = disableTwoFactorSchema;
export type RenewRecoveryCodesInput = z.input<typeof renewRecoveryCodesSchema>;

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
  two_factor: z.boolean(),
  created_at: z.string(),
});
export type AdminRecord = z.infer<typeof adminRecordSchema>;
