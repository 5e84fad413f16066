import Link from "next/link";
import type { ReactNode } from "react";
import { NavLink } from "@/components/nav-link";
import { SignOutButton } from "@/components/sign-out-button";
import { requireAdminSession } from "@/lib/admin-session/session";

// Rendered per request: it reads the session and the database.
export const dynamic = "force-dynamic";

// Every /admin page: signed-in admins only (checked here on the server, and again by each
// server action).
export default async function AdminLayout({ children }: { children: ReactNode }) {
  const session = await requireAdminSession();
  return (
    <div className="shell">
      <aside className="sidebar">
        <Link className="brand" href="/admin">
          Hosting Panel
        </Link>
        <nav aria-label="Main">
          <NavLink href="/admin">Dashboard</NavLink>
          <div className="group">Hosting</div>
          <NavLink href="/admin/accounts">Hosting accounts</NavLink>
          <NavLink href="/admin/plans">Plans</NavLink>
          <NavLink href="/admin/resellers">Resellers</NavLink>
          <NavLink href="/admin/php-versions">PHP versions</NavLink>
          <div className="group">Settings › Security</div>
          <NavLink href="/admin/settings/api-keys">API Keys</NavLink>
        </nav>
      </aside>
      <div className="main">
        <div className="topbar">
          <span />
          <span className="actions">
            <span>{session.email}</span>
            <SignOutButton />
          </span>
        </div>
        {children}
      </div>
    </div>
  );
}
