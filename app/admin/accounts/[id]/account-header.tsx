import type { ReactNode } from "react";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { StatusMessage } from "@/components/status-message";
import type { Database } from "@/db/client";
import type { HostingAccountRecord } from "@/lib/accounts/schemas";
import { suspendedSince } from "@/lib/accounts/overview";
import { moveTargets } from "@/lib/moves/service";
import { AccountActions, SuspendedBanner } from "./account-actions";
import { ACCOUNT_STEP, accountPaths } from "./paths";
import { TabLink } from "./tab-link";

/**
 * The top of every page of one account: the trail back to it, the page's title with its main
 * action (e.g. "Add domain") and the account's Actions menu, the status banner while it is
 * suspended, what the admin's last action did, and the account's tabs (the current one marked).
 * `trail`: the steps below the account, the last one this page.
 */
export async function AccountHeader({
  db,
  account,
  trail = [],
  title,
  action,
}: {
  db: Database;
  account: HostingAccountRecord;
  trail?: { label: string; href?: string }[];
  title: string;
  action?: ReactNode;
}) {
  const paths = accountPaths(account.id);
  const [since, targets] = await Promise.all([suspendedSince(db, account), moveTargets(db)]);
  const lifecycle = { id: account.id, username: account.username, suspended: account.is_suspended, node: account.node };
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
        <div className="actions">
          {action}
          <AccountActions
            account={lifecycle}
            moveHref={targets.some((name) => name !== account.node) ? `${paths.settings}#node` : null}
          />
        </div>
      </div>
      <div id={ACCOUNT_STEP} />
      {account.is_suspended && <SuspendedBanner account={lifecycle} since={since} reason={account.suspension_reason} />}
      <StatusMessage />
      <nav className="tabs" aria-label="Account sections">
        <TabLink href={paths.overview} exact>
          Overview
        </TabLink>
        <TabLink href={paths.domains}>Domains</TabLink>
        <TabLink href={paths.databases}>Databases</TabLink>
        <TabLink href={paths.databaseUsers}>Database users</TabLink>
        <TabLink href={paths.dns}>DNS</TabLink>
        <TabLink href={paths.cronJobs}>Cron</TabLink>
        <TabLink href={paths.email}>Email</TabLink>
        <TabLink href={paths.filesAndSsh}>Files &amp; SSH</TabLink>
        <TabLink href={paths.php}>PHP</TabLink>
        <TabLink href={paths.certificates}>Certificates</TabLink>
        <TabLink href={paths.backups}>Backups</TabLink>
        <TabLink href={paths.settings}>Settings</TabLink>
      </nav>
    </>
  );
}
