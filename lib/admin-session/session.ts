import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { decode, type JWT } from "next-auth/jwt";
import { type Database, getDb } from "@/db/client";
import { getAuthSecret } from "@/lib/admins/auth-secret";
import { findAdmin, refreshAuthCache } from "@/lib/auth/key-cache";
import { env } from "@/lib/env";

// Admin sessions are next-auth JWT cookies, and a valid signature is not enough: each token
// carries its admin's session generation at sign-in (`sv`) and the sign-in time (`auth_time`).
// A token is honoured only while its admin exists, is enabled, still has that generation
// (sign-out and password changes bump it) and the sign-in is under SESSION_MAX_AGE_S old, whatever
// next-auth's sliding expiry says. The admin is read through the per-instance auth cache, which
// auth_generation invalidates (migration 0006's trigger): so a session ends on the very next
// request on every instance, for the price of the one-row read API keys already pay.

export const SESSION_MAX_AGE_S = 12 * 60 * 60;

export interface AdminSession {
  adminUserId: number;
  email: string;
  name: string;
  /** ADMIN_2FA_REQUIRED and this admin has no two-factor sign-in yet: only the set-up page is open. */
  mustSetUpTwoFactor: boolean;
}

/** The one admin page a session that must set up two-factor sign-in may reach. */
export const TWO_FACTOR_SETUP_PATH = "/admin/settings/two-factor";

/** The claims a new session token carries for `admin`, beside next-auth's own. */
export const sessionClaims = (admin: { id: number; sessionGeneration: number }) => ({
  sub: String(admin.id),
  sv: admin.sessionGeneration,
  auth_time: Math.floor(Date.now() / 1000),
});

/** The admin a decoded session token stands for, or null when that session has ended. */
export async function adminOfToken(token: JWT | null): Promise<AdminSession | null> {
  const id = Number(token?.sub);
  const signedInAt = Number(token?.auth_time);
  if (!token || !Number.isSafeInteger(id) || !Number.isFinite(signedInAt)) return null;
  if (Date.now() / 1000 - signedInAt > SESSION_MAX_AGE_S) return null;
  await refreshAuthCache();
  const admin = await findAdmin(id);
  if (!admin?.isEnabled || admin.sessionGeneration !== token.sv) return null;
  return {
    adminUserId: admin.id,
    email: admin.email,
    name: admin.name || admin.email,
    mustSetUpTwoFactor: env().admin2faRequired && !admin.hasTwoFactor,
  };
}

/** next-auth's cookie name: the __Secure- form when the panel is served over HTTPS. */
export function sessionCookieName(): string {
  return env().publicUrl.startsWith("https://") ? "__Secure-next-auth.session-token" : "next-auth.session-token";
}

/** The session cookie's attributes: HttpOnly, SameSite=Lax, Secure when served over HTTPS. */
export function sessionCookieOptions() {
  return { httpOnly: true, sameSite: "lax" as const, path: "/", secure: env().publicUrl.startsWith("https://") };
}

let secret: Promise<string> | undefined;

/**
 * The key session tokens are encrypted with, read once per process; a failed read (the database
 * away) is forgotten, so the next request tries again instead of failing until a restart.
 */
export function sessionSecret(): Promise<string> {
  secret ??= getDb()
    .then(getAuthSecret)
    .catch((error) => {
      secret = undefined;
      throw error;
    });
  return secret;
}

/** The admin behind a session cookie's value, or null (absent, forged, expired or ended). */
export async function adminOfCookie(value: string | undefined): Promise<AdminSession | null> {
  if (!value) return null;
  const token = await decode({ token: value, secret: await sessionSecret() }).catch(() => null);
  return adminOfToken(token);
}

/**
 * The signed-in admin, or null. For server components, server actions and route handlers. Checked
 * once per render (React's cache): the layout and the page of one view share the check.
 */
export const getAdminSession = cache(async (): Promise<AdminSession | null> =>
  adminOfCookie((await cookies()).get(sessionCookieName())?.value),
);

/** What admin code works with: the signed-in admin and the database. */
export interface AdminContext {
  admin: AdminSession;
  db: Database;
}

/**
 * The one way admin pages, server actions and route handlers reach admin data: the session is
 * checked first, in the same code path as the read (proxy.ts checks it too, before rendering,
 * but a page must not rely on it). Anyone else is sent to sign in; an admin who must first set
 * up two-factor sign-in (ADMIN_2FA_REQUIRED) is sent to that page.
 */
export async function requireAdminSession(): Promise<AdminContext> {
  const context = await requireAdminSessionForTwoFactor();
  if (context.admin.mustSetUpTwoFactor) redirect(TWO_FACTOR_SETUP_PATH);
  return context;
}

/**
 * Like requireAdminSession, but also for an admin who has yet to set up two-factor sign-in: only
 * for the two-factor page and its actions (and the layout's frame), which touch nothing but the
 * signed-in admin's own record.
 */
export async function requireAdminSessionForTwoFactor(): Promise<AdminContext> {
  const admin = await getAdminSession();
  if (!admin) redirect("/login");
  return { admin, db: await getDb() };
}
