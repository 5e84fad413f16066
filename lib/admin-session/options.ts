import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { encode } from "next-auth/jwt";
import { getDb } from "@/db/client";
import { verifyPasswordOrNone } from "@/lib/admins/password";
import { TWO_FACTOR_REQUIRED, TWO_FACTOR_WRONG } from "@/lib/admins/schemas";
import { endAdminSessions, findAdminByEmail } from "@/lib/admins/service";
import { acceptSecondFactor } from "@/lib/admins/two-factor";
import { AppError } from "@/lib/errors";
import { CLIENT_ADDRESS_HEADER } from "@/lib/http/client-address";
import { SESSION_MAX_AGE_S, adminOfToken, sessionClaims, sessionCookieName, sessionCookieOptions, sessionSecret } from "./session";
import { clearSignInAttempts, countSignInAttempt, uncountSignInAttempt } from "./sign-in-throttle";

// Admin sessions: next-auth v4, JWT strategy, email + password of enabled admin_users, and for an
// admin with two-factor sign-in a code in the same request (a TOTP or recovery code): without it
// the answer is the error TwoFactorRequired and no session — there is no half-signed-in state. The
// signing secret is AUTH_SECRET or the one kept in the database (lib/admins/auth-secret.ts), so
// every instance accepts every other's sessions; what ends a session is in ./session.ts.

/** What authorize() answers for an admin: next-auth's user plus the session generation. */
type SignedIn = { id: string; email: string; name: string; sessionGeneration: number };

let cachedOptions: Promise<NextAuthOptions> | undefined;

/** Built once per process; a failed build (the database away) is forgotten and tried again. */
export function authOptions(): Promise<NextAuthOptions> {
  cachedOptions ??= buildOptions().catch((error) => {
    cachedOptions = undefined;
    throw error;
  });
  return cachedOptions;
}

async function buildOptions(): Promise<NextAuthOptions> {
  return {
    secret: await sessionSecret(),
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_S },
    pages: { signIn: "/login" },
    cookies: { sessionToken: { name: sessionCookieName(), options: sessionCookieOptions() } },
    providers: [
      CredentialsProvider({
        name: "Email and password",
        credentials: {
          email: { label: "Email", type: "email" },
          password: { label: "Password", type: "password" },
          code: { label: "Code", type: "text" },
        },
        // Every attempt counts towards the throttle (./sign-in-throttle.ts) before anything is
        // checked — a wrong password, a wrong code, an unknown e-mail alike — and only a sign-in
        // clears it. Every e-mail, known or not, enabled or not, costs the same scrypt.
        async authorize(credentials, request) {
          const address = String(request?.headers?.[CLIENT_ADDRESS_HEADER] ?? "unknown");
          const email = credentials?.email?.trim().toLowerCase();
          if (!email || !credentials?.password) return null;
          const db = await getDb();
          const refusal = await countSignInAttempt(db, address, email);
          if (refusal) throw new Error(refusal);
          const admin = await findAdminByEmail(db, email);
          const passwordRight = await verifyPasswordOrNone(credentials.password, admin?.passwordHash ?? null).catch((error) => {
            if (error instanceof AppError) throw new Error(error.message); // the scrypt queue is full
            throw error;
          });
          if (!admin?.isEnabled || !passwordRight) return null;
          if (admin.totpSecret) {
            // The password was right: a missing code is a question (the form asks for it).
            const code = credentials.code?.trim();
            if (!code) {
              await uncountSignInAttempt(db, address, email);
              throw new Error(TWO_FACTOR_REQUIRED);
            }
            if (!(await acceptSecondFactor(db, admin, code))) throw new Error(TWO_FACTOR_WRONG);
          }
          await clearSignInAttempts(db, address, email);
          const user: SignedIn = { id: String(admin.id), email: admin.email, name: admin.name || admin.email, sessionGeneration: admin.sessionGeneration };
          return user;
        },
      }),
    ],
    callbacks: {
      // At sign-in the token gets its session claims; afterwards (GET /api/auth/session) an
      // ended session is refused, and next-auth clears its cookie.
      async jwt({ token, user }) {
        if (user) return { ...token, ...sessionClaims({ id: Number(user.id), sessionGeneration: (user as unknown as SignedIn).sessionGeneration }) };
        if (!(await adminOfToken(token))) throw new Error("This session has ended");
        return token;
      },
      session({ session, token }) {
        if (session.user && token.sub) (session.user as { id?: string }).id = token.sub;
        return session;
      },
    },
    events: {
      // A copied cookie must not outlive sign-out.
      async signOut({ token }) {
        const id = Number(token?.sub);
        if (Number.isSafeInteger(id) && (await adminOfToken(token))) await endAdminSessions(await getDb(), id);
      },
    },
    logger: {
      // An ended session asking for itself is expected, not an error worth a stack trace.
      error(code, metadata) {
        if (code !== "JWT_SESSION_ERROR") console.error(`[next-auth][error][${code}]`, metadata);
      },
    },
  };
}

/**
 * A session cookie for an admin, in next-auth's own format, for sign-ins that do not go through
 * a provider's form (SSO links, and the new session after an admin changes their own password).
 */
export async function issueSessionCookie(admin: { id: number; email: string; name: string; sessionGeneration: number }) {
  const value = await encode({
    token: { email: admin.email, name: admin.name || admin.email, ...sessionClaims(admin) },
    secret: await sessionSecret(),
    maxAge: SESSION_MAX_AGE_S,
  });
  return { name: sessionCookieName(), value, options: { ...sessionCookieOptions(), maxAge: SESSION_MAX_AGE_S } };
}
