import { cookies } from "next/headers";
import Link from "next/link";
import type { ReactNode } from "react";
import { MainMenu } from "@/components/main-menu";
import { NavLink } from "@/components/nav-link";
import { SignOutButton } from "@/components/sign-out-button";
import { TimeZoneProvider } from "@/components/time";
import { requireAdminSessionForTwoFactor } from "@/lib/admin-session/session";
import { knownTimeZone, TIME_ZONE_COOKIE } from "@/lib/admin-session/time-zone";

// Rendered per request: it reads the session and the database.
export const dynamic = "force-dynamic";

// Every /admin page: signed-in admins only. proxy.ts turns everyone else away before rendering,
// and every page and server action checks the session again where it reads (requireAdminSession).
// The frame itself shows only the admin's own email, so it is drawn for a session that must
// first set up two-factor sign-in too (ADMIN_2FA_REQUIRED), without the navigation.
export default async function AdminLayout({ children }: { children: ReactNode }) {
  const { admin } = await requireAdminSessionForTwoFactor();
  const timeZone = knownTimeZone((await cookies()).get(TIME_ZONE_COOKIE)?.value);
  return (
    <TimeZoneProvider zone={timeZone}>
      <a className="skip-link" href="#main-content">
        Skip to content
      </a>
      <div className="shell">
        <aside className="sidebar">
          <Link className="brand" href="/admin">
            Hosting Panel
          </Link>
          {!admin.mustSetUpTwoFactor && (
            <MainMenu>
              <NavLink href="/admin">Dashboard</NavLink>
              <div className="group">Hosting</div>
              <NavLink href="/admin/accounts">Hosting accounts</NavLink>
              <NavLink href="/admin/backups">Backups</NavLink>
              <NavLink href="/admin/nodes">Nodes</NavLink>
              <NavLink href="/admin/plans">Plans</NavLink>
              <NavLink href="/admin/resellers">Resellers</NavLink>
              <NavLink href="/admin/php-versions">PHP versions</NavLink>
              <div className="group">Settings › Security</div>
              <NavLink href="/admin/settings/api-keys">API Keys</NavLink>
              <NavLink href="/admin/settings/admins">Admins</NavLink>
              <NavLink href="/admin/settings/two-factor">Two-factor sign-in</NavLink>
            </MainMenu>
          )}
        </aside>
        <div className="main">
          <div className="topbar">
            <span />
            <span className="actions">
              <span>{admin.email}</span>
              <SignOutButton />
            </span>
          </div>
          <main id="main-content" tabIndex={-1}>
            {children}
          </main>
        </div>
      </div>
    </TimeZoneProvider>
  );
}
