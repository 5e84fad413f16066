"use server";

import { revalidatePath } from "next/cache";
import { cookies } from "next/headers";
import { type FormState, formError } from "@/lib/admin-session/form-state";
import { issueSessionCookie } from "@/lib/admin-session/options";
import { requireAdminSessionForTwoFactor } from "@/lib/admin-session/session";
import type { ConfirmTwoFactorInput, DisableTwoFactorInput, RenewRecoveryCodesInput } from "@/lib/admins/schemas";
import {
  beginTwoFactorSetup,
  cancelTwoFactorSetup,
  confirmTwoFactorSetup,
  disableOwnTwoFactor,
  renewRecoveryCodes,
  type TwoFactorSetup,
} from "@/lib/admins/two-factor";

// Server actions of the two-factor page. They act only on the signed-in admin's own record, so
// they are open to a session that must still set up two-factor sign-in (ADMIN_2FA_REQUIRED).

const PAGE = "/admin/settings/two-factor";

/** A new secret for this admin, shown this once (QR code and text). */
export async function beginTwoFactorSetupAction(): Promise<FormState | { saved: TwoFactorSetup }> {
  const { admin, db } = await requireAdminSessionForTwoFactor();
  try {
    return { saved: await beginTwoFactorSetup(db, admin.adminUserId) };
  } catch (error) {
    return formError(error);
  }
}

/** "Cancel" during set-up: the secret shown is forgotten. */
export async function cancelTwoFactorSetupAction(): Promise<FormState> {
  const { admin, db } = await requireAdminSessionForTwoFactor();
  try {
    await cancelTwoFactorSetup(db, admin.adminUserId);
  } catch (error) {
    return formError(error);
  }
  return null;
}

/**
 * Confirms set-up with a code: every other session of this admin ends, this browser gets a new
 * one, and the recovery codes are answered this once.
 */
export async function confirmTwoFactorSetupAction(input: ConfirmTwoFactorInput): Promise<FormState | { saved: { recoveryCodes: string[] } }> {
  const { admin, db } = await requireAdminSessionForTwoFactor();
  try {
    const confirmed = await confirmTwoFactorSetup(db, admin.adminUserId, input);
    const cookie = await issueSessionCookie(confirmed.admin);
    (await cookies()).set(cookie.name, cookie.value, cookie.options);
    return { saved: { recoveryCodes: confirmed.recoveryCodes } };
  } catch (error) {
    return formError(error);
  }
}

export async function disableTwoFactorAction(input: DisableTwoFactorInput): Promise<FormState> {
  const { admin, db } = await requireAdminSessionForTwoFactor();
  try {
    await disableOwnTwoFactor(db, admin.adminUserId, input);
  } catch (error) {
    return formError(error);
  }
  revalidatePath(PAGE);
  return null;
}

/** "Make new recovery codes": password and a current code; the new codes are answered this once. */
export async function renewRecoveryCodesAction(input: RenewRecoveryCodesInput): Promise<FormState | { saved: { recoveryCodes: string[] } }> {
  const { admin, db } = await requireAdminSessionForTwoFactor();
  try {
    const recoveryCodes = await renewRecoveryCodes(db, admin.adminUserId, input);
    revalidatePath(PAGE);
    return { saved: { recoveryCodes } };
  } catch (error) {
    return formError(error);
  }
}
