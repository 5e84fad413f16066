import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { encode } from "next-auth/jwt";
import { getDb } from "@/db/client";
import { getAuthSecret } from "@/lib/admins/auth-secret";
import { verifyPassword } from "@/lib/admins/password";
import { findAdminByEmail } from "@/lib/admins/service";
import { env } from "@/lib/env";
import { CLIENT_ADDRESS_HEADER } from "@/lib/http/client-address";
import { isThrottled, recordFailure, recordSuccess } from "./sign-in-throttle";

// Admin sessions: next-auth v4, JWT strategy, email + password of admin_users. The signing
// secret is AUTH_SECRET or the one kept in the database (lib/admins/auth-secret.ts), so every
// instance accepts every other's sessions.

export const SESSION_MAX_AGE_S = 8 * 60 * 60;

let cachedOptions: Promise<NextAuthOptions> | undefined;

export function authOptions(): Promise<NextAuthOptions> {
  return (cachedOptions ??= buildOptions());
}

async function buildOptions(): Promise<NextAuthOptions> {
  const secret = await getAuthSecret(await getDb());
  return {
    secret,
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_S },
    pages: { signIn: "/login" },
    providers: [
      CredentialsProvider({
        name: "Email and password",
        credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
        async authorize(credentials, request) {
          const address = String(request?.headers?.[CLIENT_ADDRESS_HEADER] ?? "unknown");
          if (isThrottled(address)) throw new Error("Too many failed sign-ins from this address; try again in 15 minutes");
          if (!credentials?.email || !credentials.password) return null;
          const admin = await findAdminByEmail(await getDb(), credentials.email);
          if (!admin || !(await verifyPassword(credentials.password, admin.passwordHash))) {
            recordFailure(address);
            return null;
          }
          recordSuccess(address);
          return { id: String(admin.id), email: admin.email, name: admin.name || admin.email };
        },
      }),
    ],
    callbacks: {
      session({ session, token }) {
        if (session.user && token.sub) (session.user as { id?: string }).id = token.sub;
        return session;
      },
    },
  };
}

/** next-auth's cookie name: the __Secure- form when the panel is served over HTTPS. */
export function sessionCookieName(): string {
  return env().publicUrl.startsWith("https://") ? "__Secure-next-auth.session-token" : "next-auth.session-token";
}

/**
 * A session cookie for an admin, in next-auth's own format, for sign-ins that do not go through
 * a provider's form (SSO links).
 */
export async function issueSessionCookie(admin: { id: number; email: string; name: string }) {
  const { secret } = await authOptions();
  const value = await encode({
    token: { sub: String(admin.id), email: admin.email, name: admin.name || admin.email },
    secret: secret!,
    maxAge: SESSION_MAX_AGE_S,
  });
  return {
    name: sessionCookieName(),
    value,
    options: {
      httpOnly: true,
      sameSite: "lax" as const,
      path: "/",
      secure: env().publicUrl.startsWith("https://"),
      maxAge: SESSION_MAX_AGE_S,
    },
  };
}
