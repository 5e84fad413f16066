import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { listDomains } from "@/lib/domains/service";
import { ADMIN } from "@/lib/accounts/manager";
import { backupStatus, listRuns } from "@/lib/backups/service";
import { getReseller } from "@/lib/resellers/service";
import { listSshKeys, sshEnabled } from "@/lib/ssh/service";
import { listCronJobs } from "@/lib/cron/service";
import { getPhpSettings } from "@/lib/php-settings/service";
import { AccountAdminForm } from "../../account-forms";
import { accountFormOptions } from "../../form-options";
import { AccountLifecycle } from "./account-lifecycle";
import { Backups } from "./backups";
import { Certificates } from "./certificates";
import { Applications } from "./applications";
import { SshKeys } from "./ssh-keys";

export const metadata: Metadata = { title: "Edit hosting account" };

export default async function EditAccountPage({ params }: { params: Promise<{ id: string }> }) {
  const { db } = await requireAdminSession();
  const account = await recordOr404((await params).id, (id) => getAccount(db, id));
  const reseller = account.reseller_id === null ? null : await getReseller(db, account.reseller_id);
  // restic answers for the restore points: a repository it cannot read is said in the panel, the page still shows.
  const restorePoints = await listRuns(account.id).then(
    (runs) => ({ runs, error: null }),
    (error: Error) => ({ runs: [], error: error.message }),
  );
  const [backup = null] = (await backupStatus(db, ADMIN, account.id)).accounts;
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Hosting accounts", href: "/admin/accounts" }, { label: account.username }]} />
      <h1>Edit hosting account “{account.username}”</h1>
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
            {account.is_suspended ? <span className="badge off">Suspended</span> : <span className="badge on">Active</span>}
            {account.suspension_reason && <div className="muted">{account.suspension_reason}</div>}
          </div>
        </div>
        <div>
          <div className="muted">Created</div>
          <div>{account.created_at.slice(0, 10)}</div>
        </div>
      </section>
      <AccountAdminForm
        accountId={account.id}
        initial={{
          plan: account.plan.name,
          reseller: reseller?.username ?? null,
          has_ssh_access: account.has_ssh_access,
        }}
        {...await accountFormOptions(db)}
      />
      <SshKeys
        account={{ id: account.id, username: account.username }}
        keys={(await listSshKeys(db, account.id)).ssh_keys}
        connection={{ host: account.ssh.host, port: account.ssh.port, shell: account.ssh.shell, managed: sshEnabled() }}
      />
      <Applications accountId={account.id} php={await getPhpSettings(db, account.id)} cronJobs={await listCronJobs(db, account.id)} />
      <Certificates accountId={account.id} autoSsl={account.is_auto_ssl_enabled} domains={await listDomains(db, account.id)} />
      <Backups account={{ id: account.id, username: account.username }} status={backup} runs={restorePoints.runs} runsError={restorePoints.error} />
      <AccountLifecycle account={{ id: account.id, username: account.username, suspended: account.is_suspended }} />
    </>
  );
}
