import Link from "next/link";
import { Suspense } from "react";
import { Badge, Failure } from "@/components/status";
import { Ago, Time } from "@/components/time";
import { amount, UsageBar } from "@/components/usage-bar";
import { env } from "@/lib/env";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { VisitorsChart } from "@/components/visitors-chart";
import type { AccountOverview as Overview, VisitorDay } from "@/lib/accounts/overview";
import { CertificateState, SiteProfile } from "./domains/domain-facts";
import { accountPaths } from "./paths";

// The top of an account's page (the "account summary" of WHM's list and cPanel's stats bar): what
// the account has, what it uses against its plan, what went wrong, each line linked to the page
// where it is changed.

const count = (used: number, limit: number | null) => (limit === null ? `${used}` : `${used} of ${limit}`);

/** The node the account lives on, and whether it has done what the panel asked (trouble linked to the node's page). */
function NodeLine({ overview }: { overview: Overview }) {
  const { account, node } = overview;
  const nodeHref = node ? `/admin/nodes/${node.id}/edit` : "/admin/nodes";
  const name = <Link href={nodeHref}>{account.node}</Link>;
  if (account.node_sync === "failed") {
    return (
      <>
        {name} <Failure label="Out of step" reason={account.node_error ?? "its last change failed there"} fix={{ href: nodeHref, label: "See the node" }} />
      </>
    );
  }
  if (account.node_sync === "pending") {
    return (
      <>
        {name}{" "}
        <Failure label="Waiting" reason={`changes wait until ${account.node} answers${node && node.state !== "active" ? ` (it is ${node.state})` : ""}`} fix={{ href: nodeHref, label: "See the node" }} />
      </>
    );
  }
  return (
    <>
      {name} {node && node.state !== "active" && node.state !== "draining" ? <Failure label={node.state} fix={{ href: nodeHref, label: "See the node" }} /> : <Badge tone="ok">In step</Badge>}
    </>
  );
}

/** How long a home's measured size is kept (DISK_USAGE_MAX_AGE_S) in words. */
const keptFor = () => {
  const seconds = env().diskUsageMaxAgeMs / 1000;
  return seconds >= 120 ? `${Math.round(seconds / 60)} minutes` : `${seconds} s`;
};

/**
 * The home's size against the plan and how old that figure is (it is kept for a while, so an
 * upload since may not show yet); when it is not measured, why.
 */
function DiskUsage({ overview }: { overview: Overview }) {
  const { disk } = overview.usage;
  const limit = disk.limit_mb === null ? "(no limit)" : `of ${amount(disk.limit_mb, "MB")}`;
  if (disk.used_mb === null) {
    return overview.account.node === LOCAL_NODE ? (
      <>
        <div data-testid="disk-usage">— {limit}, not measured here: quotas are off</div>
        <div className="hint">
          This server keeps no homes (WEB_SERVER and SYSTEM_USERS are off in the panel&apos;s configuration): nothing is measured or enforced.
        </div>
      </>
    ) : (
      <div data-testid="disk-usage">
        — {limit}, not measured: its node {overview.account.node} does not answer
      </div>
    );
  }
  return (
    <>
      <UsageBar label="Disk used" used={disk.used_mb} limit={disk.limit_mb} unit="MB" />
      {disk.measured_at && (
        <div className="hint" data-testid="disk-measured">
          Measured <Ago at={disk.measured_at} />
          {overview.account.node === LOCAL_NODE && `; a figure is kept up to ${keptFor()} before it is measured again`}.
        </div>
      )}
      {disk.limit_mb !== null && !disk.enforced && (
        <div className="hint">The limit is not enforced by this server&apos;s file system (no disk quotas on its homes).</div>
      )}
    </>
  );
}

export function AccountOverview({ overview, visitors }: { overview: Overview; visitors: Promise<{ days: VisitorDay[] } | { unavailable: string }> }) {
  const { account, usage, backup, domains, databases, databaseUsers } = overview;
  const paths = accountPaths(account.id);
  return (
    <>
      {account.node_sync !== "ok" && (
        <p className="alert" role="alert">
          {account.node_sync === "pending"
            ? `Changes to this account wait for its node ${account.node}, which does not answer: they are applied when it is back.`
            : `The last change to this account failed on its node ${account.node}: ${account.node_error ?? "see the node's page"}.`}
        </p>
      )}
      <section className="card summary" aria-label="Account">
        <div>
          <div className="muted">Domain</div>
          <div>{account.domain}</div>
        </div>
        <div>
          <div className="muted">Email</div>
          <div>{account.email ?? "—"}</div>
        </div>
        <div>
          <div className="muted">Status</div>
          <div>
            {account.is_suspended ? <Badge tone="trouble">Suspended</Badge> : <Badge tone="ok">Active</Badge>}
            {account.suspension_reason && <div className="muted">{account.suspension_reason}</div>}
          </div>
        </div>
        <div>
          <div className="muted">Plan</div>
          <div>
            <Link href={paths.settings}>{account.plan.name}</Link>
          </div>
        </div>
        <div>
          <div className="muted">Node</div>
          <div>
            <NodeLine overview={overview} />
          </div>
        </div>
        <div>
          <div className="muted">SSH access</div>
          <div>
            <Link href={paths.filesAndSsh}>{account.has_ssh_access ? "SFTP and shell" : "SFTP only"}</Link>
            <span className="muted"> · {overview.sshKeyCount === 1 ? "1 key" : `${overview.sshKeyCount} keys`}</span>
          </div>
        </div>
        <div>
          <div className="muted">Last backup</div>
          <div data-testid="overview-backup">
            {backup?.last_error ? (
              <Failure reason={backup.last_error} fix={{ href: paths.backups, label: "Backups" }} />
            ) : (
              <Link href={paths.backups}>
                <Time at={backup?.last_success_at} empty="never" />
              </Link>
            )}
          </div>
        </div>
        <div>
          <div className="muted">Created</div>
          <div>
            <Time at={account.created_at} />
          </div>
        </div>
      </section>

      <section className="card" aria-labelledby="usage-heading">
        <h2 id="usage-heading">Usage</h2>
        <div className="usage-grid">
          <div>
            <div className="muted">Disk</div>
            <DiskUsage overview={overview} />
          </div>
          <div>
            <div className="muted">Domains</div>
            <Link href={paths.domains}>{count(usage.domains.used, usage.domains.limit)}</Link>
          </div>
          <div>
            <div className="muted">Databases</div>
            <Link href={paths.databases}>{count(usage.databases.used, usage.databases.limit)}</Link>
          </div>
          <div>
            <div className="muted">Database users</div>
            <Link href={paths.databaseUsers}>{count(usage.database_users.used, usage.database_users.limit)}</Link>
          </div>
          <div>
            <div className="muted">DNS records</div>
            <Link href={paths.dns}>{count(usage.dns_records.used, usage.dns_records.limit)}</Link>
          </div>
          <div>
            <div className="muted">Cron jobs</div>
            <Link href={paths.cronJobs}>{count(overview.cronJobCount, account.plan.max_cron_jobs)}</Link>
          </div>
        </div>
      </section>

      <section className="card" aria-labelledby="overview-domains-heading">
        <h2 id="overview-domains-heading">
          Domains <Link className="heading-link" href={paths.domains}>Manage</Link>
        </h2>
        <div className="table-scroll">
          <table className="data" aria-label="Domains of the account">
            <thead>
              <tr>
                <th>Domain</th>
                <th>Document root</th>
                <th>Site</th>
                <th>Certificate</th>
              </tr>
            </thead>
            <tbody>
              {domains.map((domain) => (
                <tr key={domain.id}>
                  <td>
                    <Link href={`${paths.domains}/${domain.id}/edit`}>{domain.domain}</Link>
                    {domain.domain_type !== "domain" && <div className="muted">{domain.domain_type}</div>}
                  </td>
                  <td>{domain.domain_path ? <code>{domain.domain_path}</code> : <span className="muted">its domain&apos;s</span>}</td>
                  <td>
                    <SiteProfile domain={domain} />
                  </td>
                  <td>
                    <CertificateState ssl={domain.ssl} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section className="card" aria-labelledby="overview-databases-heading">
        <h2 id="overview-databases-heading">
          Databases <Link className="heading-link" href={paths.databases}>Manage</Link>
        </h2>
        <div className="table-scroll">
          <table className="data" aria-label="Databases of the account">
            <thead>
              <tr>
                <th>Database</th>
                <th>Size</th>
                <th>Users</th>
              </tr>
            </thead>
            <tbody>
              {databases.length === 0 && (
                <tr>
                  <td colSpan={3} className="muted">
                    No databases.
                  </td>
                </tr>
              )}
              {databases.map((database) => (
                <tr key={database.id}>
                  <td>
                    <Link href={paths.databases}>{database.database_name}</Link>
                  </td>
                  <td>{database.size_mb === null ? <span className="muted">unknown</span> : `${database.size_mb} MB`}</td>
                  <td>
                    {database.users.length === 0 ? (
                      <span className="muted">none</span>
                    ) : (
                      database.users.map((user, index) => (
                        <span key={user.id}>
                          {index > 0 && ", "}
                          <Link href={`${paths.databaseUsers}/${user.id}/edit`}>{user.username}</Link>
                        </span>
                      ))
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {databaseUsers.some((user) => user.databases.length === 0) && (
          <p className="muted">
            Users with no database:{" "}
            {databaseUsers
              .filter((user) => user.databases.length === 0)
              .map((user) => user.username)
              .join(", ")}
          </p>
        )}
      </section>

      <section className="card" aria-labelledby="visitors-heading">
        <h2 id="visitors-heading">Visitors per day</h2>
        <Suspense fallback={<p className="muted">Reading the access logs…</p>}>
          <Visitors visitors={visitors} />
        </Suspense>
      </section>
    </>
  );
}

/** The account's visitors from its GoAccess report, once it is read (the rest of the page does not wait for it). */
async function Visitors({ visitors }: { visitors: Promise<{ days: VisitorDay[] } | { unavailable: string }> }) {
  const report = await visitors;
  if ("unavailable" in report) return <Failure label="Unavailable" reason={report.unavailable} />;
  if (report.days.length === 0) return <p className="muted">No visits logged yet: the chart shows once the account&apos;s sites have been visited.</p>;
  return <VisitorsChart days={report.days} />;
}
