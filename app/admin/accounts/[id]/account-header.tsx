import { Breadcrumbs } from "@/components/breadcrumbs";
import { NavLink } from "@/components/nav-link";
import { accountPaths } from "./paths";

/**
 * The top of every page of one account: the trail back to it, the page's title, and the account's
 * sections (the current one marked). `trail`: the steps below the account, the last one this page.
 */
export function AccountHeader({ account, trail = [], title }: { account: { id: number; username: string }; trail?: { label: string; href?: string }[]; title: string }) {
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
      <h1>{title}</h1>
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
