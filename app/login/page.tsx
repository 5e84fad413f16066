import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { getAdminSession } from "@/lib/admin-session/session";
import { LoginForm } from "./login-form";

// Rendered per request: it reads the session and the database.
export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Sign in" };

/** Where to go after signing in: the admin page that sent the visitor here, never another site. */
const afterSignIn = (callbackUrl: unknown) =>
  typeof callbackUrl === "string" && /^\/admin(?:[/?#]|$)/.test(callbackUrl) ? callbackUrl : "/admin";

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const next = afterSignIn((await searchParams).callbackUrl);
  if (await getAdminSession()) redirect(next);
  return (
    <main className="auth card">
      <h1>Sign in to the Hosting Panel</h1>
      <LoginForm next={next} />
    </main>
  );
}
