import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { getAdminSession } from "@/lib/admin-session/session";
import { LoginForm } from "./login-form";

// Rendered per request: it reads the session and the database.
export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Sign in" };

export default async function LoginPage() {
  if (await getAdminSession()) redirect("/admin");
  return (
    <main className="auth card">
      <h1>Sign in to the Hosting Panel</h1>
      <LoginForm />
    </main>
  );
}
