import type { ReactNode } from "react";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { NavLink } from "@/components/nav-link";
import { accountPaths } from "./paths";

/**
 * The top of every page of one account: the trail back to it, the page's title, and the account's
 * sections (the current one marked). `trail`: the steps below the account, the last one this page;
 * `action`: the page's main action (e.g. "Add domain"), beside its title.
 */
export function AccountHeader({
  account,
  trail = [],
  title,
  action,
}: {
  account: { id: number; username: string };
  trail?: { label: string; href?: string }[];
  title: string;
  action?: ReactNode;
}) {
  const paths = accountPaths(account.id);
  return (
    <>
      <Breadcrumbs
        trail={[
          { label: "Hosting" },
          { label: "Hosting accounts", href: "/admin/accounts" },
          { label: account.username, href: trail.length ? paths.overview : undefined },
          ...trail,
        ]}
      />
      <div className="page-header">
        <h1>{title}</h1>
        {action && <div className="actions">{action}</div>}
      </div>
      <nav className="tabs" aria-label="Account sections">
        <NavLink href={paths.overview}>Overview</NavLink>
        <NavLink href={paths.domains}>Domains</NavLink>
        <NavLink href={paths.databases}>Databases</NavLink>
        <NavLink href={paths.databaseUsers}>Database users</NavLink>
        <NavLink href={paths.dns}>DNS records</NavLink>
        <NavLink href={paths.cronJobs}>Cron jobs</NavLink>
      </nav>
    </>
  );
}
