import { createHash, randomInt } from "node:crypto";
import { and, count, eq, isNull, lt, or, sql } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import type { Database, Queryable } from "@/db/client";
import { adminRecoveryCodes, adminUsers } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { AppError, notFound, validationError } from "@/lib/errors";
import { verifyPassword } from "./password";
import {
  type AdminRecord,
  type ConfirmTwoFactorInput,
  confirmTwoFactorSchema,
  type DisableTwoFactorInput,
  disableTwoFactorSchema,
  type RenewRecoveryCodesInput,
  renewRecoveryCodesSchema,
} from "./schemas";
import { toAdminRecord } from "./service";

// Admin two-factor sign-in: TOTP (RFC 6238: SHA-1, 6 digits, 30 s steps, one step of clock drift
// either way) plus ten one-time recovery codes. A TOTP code is accepted at most once: the step it
// belongs to is remembered (totp_last_step), and only a later step is accepted afterwards — the
// write is conditional, so two sign-ins racing with one code cannot both pass.

const PERIOD_S = 30;
const DRIFT_STEPS = 1;
const RECOVERY_CODE_COUNT = 10;
// Crockford-like alphabet without look-alikes (0/O, 1/I/L): 10 characters ≈ 50 bits per code.
const RECOVERY_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ";
const ISSUER = "Hosting Panel";

const totpOf = (secret: string, label = "admin") =>
  new TOTP({ issuer: ISSUER, label, algorithm: "SHA1", digits: 6, period: PERIOD_S, secret: Secret.fromBase32(secret) });

const currentStep = (nowMs = Date.now()) => Math.floor(nowMs / 1000 / PERIOD_S);

/** The time step `code` belongs to (within the drift allowed), or null when it matches none. */
function stepOfCode(secret: string, code: string, nowMs = Date.now()): number | null {
  const delta = totpOf(secret).validate({ token: code, timestamp: nowMs, window: DRIFT_STEPS });
  return delta === null ? null : currentStep(nowMs) + delta;
}

const isTotpCode = (code: string) => /^[0-9]{6}$/.test(code.replace(/\s+/g, ""));

/** A recovery code as typed (any case, spaces or dashes) → the form it is hashed in. */
const normalRecoveryCode = (code: string) => code.toUpperCase().replace(/[^0-9A-Z]/g, "");
const recoveryCodeHash = (code: string) => createHash("sha256").update(normalRecoveryCode(code)).digest("hex");

function newRecoveryCode(): string {
  let code = "";
  for (let i = 0; i < 10; i++) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

async function adminForUpdate(db: Queryable, id: number) {
  const [admin] = await db.select().from(adminUsers).where(eq(adminUsers.id, id)).for("update");
  if (!admin) throw notFound("Admin");
  return admin;
}

export interface TwoFactorStatus {
  enabled: boolean;
  recoveryCodesLeft: number;
}

export async function twoFactorStatus(db: Queryable, id: number): Promise<TwoFactorStatus> {
  const [admin] = await db.select({ secret: adminUsers.totpSecret }).from(adminUsers).where(eq(adminUsers.id, id));
  if (!admin) throw notFound("Admin");
  const [{ left }] = await db.select({ left: count() }).from(adminRecoveryCodes).where(eq(adminRecoveryCodes.adminUserId, id));
  return { enabled: admin.secret !== null, recoveryCodesLeft: left };
}

export interface TwoFactorSetup {
  /** base32, for typing into an authenticator app by hand. */
  secret: string;
  otpauthUri: string;
  /** The otpauth URI as an SVG QR code. */
  qrSvg: string;
}

/**
 * Starts set-up: a new secret is kept as pending (replacing any earlier unconfirmed one) and
 * answered this once; two-factor sign-in is on only once a code from it is confirmed.
 */
export async function beginTwoFactorSetup(db: Database, id: number): Promise<TwoFactorSetup> {
  const secret = new Secret({ size: 20 }).base32;
  const email = await db.transaction(async (tx) => {
    const admin = await adminForUpdate(tx, id);
    if (admin.totpSecret) throw new AppError("CONFLICT", "Two-factor sign-in is already on; turn it off first to set up a new device");
    await tx.update(adminUsers).set({ totpPendingSecret: secret }).where(eq(adminUsers.id, id));
    return admin.email;
  });
  const otpauthUri = totpOf(secret, email).toString();
  // Loaded here, the one place that draws a QR code: not by every process importing this module.
  const { default: QRCode } = await import("qrcode");
  return { secret, otpauthUri, qrSvg: await QRCode.toString(otpauthUri, { type: "svg", margin: 1 }) };
}

/** "Cancel" during set-up: the secret shown is forgotten, and a code from it confirms nothing. */
export async function cancelTwoFactorSetup(db: Queryable, id: number): Promise<void> {
  const cancelled = await db.update(adminUsers).set({ totpPendingSecret: null }).where(eq(adminUsers.id, id)).returning({ id: adminUsers.id });
  if (cancelled.length === 0) throw notFound("Admin");
}

/**
 * Confirms set-up with a code from the pending secret: two-factor sign-in is on, ten recovery
 * codes are made (answered this once; only their hashes are kept), and every session of the
 * admin ends, as on a password change — the caller issues this browser a new one.
 */
export async function confirmTwoFactorSetup(db: Database, id: number, input: ConfirmTwoFactorInput) {
  const { code } = confirmTwoFactorSchema.parse(input);
  const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const row = await db.transaction(async (tx) => {
    const admin = await adminForUpdate(tx, id);
    if (admin.totpSecret) throw new AppError("CONFLICT", "Two-factor sign-in is already on");
    if (!admin.totpPendingSecret) throw validationError("code", "has no set-up to confirm; start the set-up again");
    const step = stepOfCode(admin.totpPendingSecret, code);
    if (step === null) throw validationError("code", "is not correct (check the device's clock)");
    const [updated] = await tx
      .update(adminUsers)
      .set({
        totpSecret: admin.totpPendingSecret,
        totpPendingSecret: null,
        totpLastStep: step,
        sessionGeneration: sql`${adminUsers.sessionGeneration} + 1`,
      })
      .where(eq(adminUsers.id, id))
      .returning();
    await tx.delete(adminRecoveryCodes).where(eq(adminRecoveryCodes.adminUserId, id));
    await tx.insert(adminRecoveryCodes).values(recoveryCodes.map((recovery) => ({ adminUserId: id, codeHash: recoveryCodeHash(recovery) })));
    await recordAudit(tx, { type: "admin_user", id }, { action: "admin_user.two_factor_on", targetType: "admin_user", targetId: id });
    return updated;
  });
  return { admin: { id: row.id, email: row.email, name: row.name, sessionGeneration: row.sessionGeneration }, recoveryCodes };
}

/**
 * Whether `code` is a second factor for this admin now: a TOTP code of a step later than the last
 * one used (that step is then taken), or one of their unused recovery codes (then deleted).
 */
export async function acceptSecondFactor(db: Database, admin: { id: number; totpSecret: string | null }, code: string): Promise<boolean> {
  if (!admin.totpSecret) return false;
  if (isTotpCode(code)) {
    const step = stepOfCode(admin.totpSecret, code.replace(/\s+/g, ""));
    if (step === null) return false;
    const taken = await db
      .update(adminUsers)
      .set({ totpLastStep: step })
      .where(and(eq(adminUsers.id, admin.id), or(isNull(adminUsers.totpLastStep), lt(adminUsers.totpLastStep, step))))
      .returning({ id: adminUsers.id });
    return taken.length === 1;
  }
  if (normalRecoveryCode(code).length !== 10) return false;
  const used = await db
    .delete(adminRecoveryCodes)
    .where(and(eq(adminRecoveryCodes.adminUserId, admin.id), eq(adminRecoveryCodes.codeHash, recoveryCodeHash(code))))
    .returning({ id: adminRecoveryCodes.id });
  if (used.length === 0) return false;
  await recordAudit(db, { type: "admin_user", id: admin.id }, { action: "admin_user.recovery_code", targetType: "admin_user", targetId: admin.id });
  return true;
}

/** The admin turns their own two-factor sign-in off, proven by their password and a current code. */
export async function disableOwnTwoFactor(db: Database, id: number, input: DisableTwoFactorInput): Promise<void> {
  const fields = disableTwoFactorSchema.parse(input);
  const [admin] = await db.select().from(adminUsers).where(eq(adminUsers.id, id));
  if (!admin) throw notFound("Admin");
  if (!admin.totpSecret) throw new AppError("CONFLICT", "Two-factor sign-in is already off");
  if (!(await verifyPassword(fields.password, admin.passwordHash))) throw validationError("password", "is not correct");
  if (!(await acceptSecondFactor(db, admin, fields.code))) throw validationError("code", "is not correct or was already used");
  await db.transaction(async (tx) => {
    await clearTwoFactor(tx, id, false);
    await recordAudit(tx, { type: "admin_user", id }, { action: "admin_user.two_factor_off", targetType: "admin_user", targetId: id });
  });
}

/**
 * New recovery codes for an admin who has used or lost theirs, proven by their password and a
 * current code (or one of the old recovery codes): the old ones stop working, the ten new ones are
 * answered this once. Sessions stay, as when turning two-factor sign-in off.
 */
export async function renewRecoveryCodes(db: Database, id: number, input: RenewRecoveryCodesInput): Promise<string[]> {
  const fields = renewRecoveryCodesSchema.parse(input);
  const [admin] = await db.select().from(adminUsers).where(eq(adminUsers.id, id));
  if (!admin) throw notFound("Admin");
  if (!admin.totpSecret) throw new AppError("CONFLICT", "Two-factor sign-in is off: recovery codes come with setting it up");
  if (!(await verifyPassword(fields.password, admin.passwordHash))) throw validationError("password", "is not correct");
  if (!(await acceptSecondFactor(db, admin, fields.code))) throw validationError("code", "is not correct or was already used");
  const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await db.transaction(async (tx) => {
    await tx.delete(adminRecoveryCodes).where(eq(adminRecoveryCodes.adminUserId, id));
    await tx.insert(adminRecoveryCodes).values(recoveryCodes.map((recovery) => ({ adminUserId: id, codeHash: recoveryCodeHash(recovery) })));
    await recordAudit(tx, { type: "admin_user", id }, { action: "admin_user.recovery_codes_renewed", targetType: "admin_user", targetId: id });
  });
  return recoveryCodes;
}

/**
 * For a lost device (CLI `panel admin 2fa reset ID`, another admin's Edit page): two-factor
 * sign-in off, recovery codes gone, and every session of the admin ended. Under ADMIN_2FA_REQUIRED
 * they set it up again at next sign-in.
 */
export async function resetTwoFactor(db: Database, id: number, actor: Actor): Promise<AdminRecord> {
  return db.transaction(async (tx) => {
    await adminForUpdate(tx, id);
    const row = await clearTwoFactor(tx, id, true);
    await recordAudit(tx, actor, { action: "admin_user.two_factor_reset", targetType: "admin_user", targetId: id });
    return toAdminRecord(row);
  });
}

async function clearTwoFactor(tx: Queryable, id: number, endSessions: boolean) {
  const [row] = await tx
    .update(adminUsers)
    .set({
      totpSecret: null,
      totpPendingSecret: null,
      totpLastStep: null,
      ...(endSessions ? { sessionGeneration: sql`${adminUsers.sessionGeneration} + 1` } : {}),
    })
    .where(eq(adminUsers.id, id))
    .returning();
  await tx.delete(adminRecoveryCodes).where(eq(adminRecoveryCodes.adminUserId, id));
  return row;
}
