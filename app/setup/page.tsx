import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { countAdminUsers } from "@/lib/admins/service";
import { setupTokenIsValid } from "@/lib/admins/setup";
import { SetupForm } from "./setup-form";

// Rendered per request: it reads the session and the database.
export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Set up" };

export default async function SetupPage({ searchParams }: { searchParams: Promise<{ token?: string }> }) {
  const { token = "" } = await searchParams;
  const db = await getDb();
  let body: React.ReactNode;
  if ((await countAdminUsers(db)) > 0) {
    body = (
      <p>
        Set-up is complete. <Link href="/login">Sign in</Link>.
      </p>
    );
  } else if (!(await setupTokenIsValid(db, token))) {
    body = <p className="alert">This set-up link is not valid. Use the newest link the panel printed when it started.</p>;
  } else {
    body = <SetupForm token={token} />;
  }
  return (
    <main className="auth card">
      <h1>Create the first admin</h1>
      {body}
    </main>
  );
}
