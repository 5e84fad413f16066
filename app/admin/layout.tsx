import Link from "next/link";
import type { ReactNode } from "react";
import { NavLink } from "@/components/nav-link";
import { SignOutButton } from "@/components/sign-out-button";
import { requireAdminSession } from "@/lib/admin-session/session";

// Rendered per request: it reads the session and the database.
export const dynamic = "force-dynamic";

// Every /admin page: signed-in admins only. proxy.ts turns everyone else away before rendering,
// and every page and server action checks the session again where it reads (requireAdminSession).
export default async function AdminLayout({ children }: { children: ReactNode }) {
  const { admin } = await requireAdminSession();
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
          <NavLink href="/admin/settings/admins">Admins</NavLink>
        </nav>
      </aside>
      <div className="main">
        <div className="topbar">
          <span />
          <span className="actions">
            <span>{admin.email}</span>
            <SignOutButton />
          </span>
        </div>
        {children}
      </div>
    </div>
  );
}
