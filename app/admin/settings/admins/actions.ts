"use server";

import { cookies } from "next/headers";
import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { issueSessionCookie } from "@/lib/admin-session/options";
import {
  type AdminStatusInput,
  adminStatusSchema,
  type ChangeOwnPasswordInput,
  type CreateAdminInput,
  type SetPasswordInput,
} from "@/lib/admins/schemas";
import { changeOwnPassword, createAdminUser, getAdminUser, setAdminEnabled, setAdminPassword } from "@/lib/admins/service";
import { resetTwoFactor } from "@/lib/admins/two-factor";
import { AppError, validationError } from "@/lib/errors";
import { idField } from "@/lib/http/operation";

// Server actions of the admins page (Settings › Security › Admins); the services parse the input.

const LIST = "/admin/settings/admins";

export async function createAdminAction(input: CreateAdminInput) {
  return runAdminFormAction(LIST, (db, actor) => createAdminUser(db, input, actor));
}

export async function setAdminStatusAction(id: number, input: AdminStatusInput) {
  return runAdminFormAction(LIST, (db, actor) => setAdminEnabled(db, idField.parse(id), adminStatusSchema.parse(input).is_enabled, actor));
}

/** Another admin's password: their sessions end. One's own needs the current password (below). */
export async function resetAdminPasswordAction(id: number, input: SetPasswordInput) {
  return runAdminFormAction(LIST, (db, actor) => {
    const adminId = idField.parse(id);
    if (adminId === actor.id) {
      throw validationError("password", "Change your own password with your current one (Change Your Password)");
    }
    return setAdminPassword(db, adminId, input, actor);
  });
}

/** The signed-in admin's own password: every session of theirs ends, except this browser's, which gets a new one. */
export async function changeOwnPasswordAction(input: ChangeOwnPasswordInput) {
  return runAdminFormAction(LIST, async (db, actor) => {
    const admin = await changeOwnPassword(db, actor.id, input);
    const cookie = await issueSessionCookie(admin);
    (await cookies()).set(cookie.name, cookie.value, cookie.options);
  });
}

/**
 * "Reset two-factor sign-in" of another admin who lost their device (the command line's `admin 2fa
 * reset`): it is off, their recovery codes are gone and their sessions end; the audit log records
 * who did it. One's own is turned off on the Two-factor sign-in page, with a code.
 */
export async function resetAdminTwoFactorAction(id: number) {
  return runAdminFormAction(LIST, async (db, actor) => {
    const adminId = idField.parse(id);
    if (adminId === actor.id) throw new AppError("VALIDATION", "Your own two-factor sign-in is turned off on the Two-factor sign-in page, with your password and a code");
    const admin = await getAdminUser(db, adminId);
    if (!admin.two_factor) throw new AppError("CONFLICT", `${admin.email} has no two-factor sign-in to reset`);
    return resetTwoFactor(db, adminId, actor);
  });
}
