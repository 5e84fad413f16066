import type { Metadata } from "next";
import { recordOr404 } from "@/app/admin/record-or-404";
import { accountOverview, accountVisitorDays } from "@/lib/accounts/overview";
import { requireAdminSession } from "@/lib/admin-session/session";
import { listRuns } from "@/lib/backups/service";
import { moveTargets } from "@/lib/moves/service";
import { getPhpSettings } from "@/lib/php-settings/service";
import { getReseller } from "@/lib/resellers/service";
import { listSshKeys, sshEnabled } from "@/lib/ssh/service";
import { AccountAdminForm } from "../../account-forms";
import { accountFormOptions } from "../../form-options";
import { AccountHeader } from "../account-header";
import { AccountLifecycle } from "./account-lifecycle";
import { AccountMove } from "./account-move";
import { Applications } from "./applications";
import { Backups } from "./backups";
import { Certificates } from "./certificates";
import { AccountOverview } from "./overview";
import { SshKeys } from "./ssh-keys";

export const metadata: Metadata = { title: "Edit hosting account" };

// An account's page: its overview first (what it has and uses, what went wrong), then what the
// admin changes here (plan and owner, SSH keys, PHP settings, certificates, backups, its node and
// moves, suspension).
// Its domains, databases, DNS records and cron jobs have pages of their own (the tabs).
export default async function EditAccountPage({ params }: { params: Promise<{ id: string }> }) {
  const { db } = await requireAdminSession();
  const overview = await recordOr404((await params).id, (id) => accountOverview(db, id));
  const { account } = overview;
  // Read while the rest renders: GoAccess may take a moment on large logs.
  const visitors = accountVisitorDays(db, account);
  // Its failure is shown where it is awaited (the overview's Visitors); until then it is not unhandled.
  visitors.catch(() => undefined);
  const reseller = account.reseller_id === null ? null : await getReseller(db, account.reseller_id);
  // restic answers for the restore points: a repository it cannot read is said in the panel, the page still shows.
  const restorePoints = await listRuns(db, account.id).then(
    (runs) => ({ runs, error: null }),
    (error: Error) => ({ runs: [], error: error.message }),
  );
  return (
    <>
      <AccountHeader account={account} title={`Edit hosting account “${account.username}”`} />
      <AccountOverview overview={overview} visitors={visitors} />
      <div id="plan-and-owner">
        <AccountAdminForm
          accountId={account.id}
          initial={{
            plan: account.plan.name,
            reseller: reseller?.username ?? null,
            has_ssh_access: account.has_ssh_access,
          }}
          {...await accountFormOptions(db)}
        />
      </div>
      <SshKeys
        account={{ id: account.id, username: account.username }}
        keys={(await listSshKeys(db, account.id)).ssh_keys}
        connection={{ host: account.ssh.host, port: account.ssh.port, shell: account.ssh.shell, managed: sshEnabled() }}
      />
      <Applications accountId={account.id} php={await getPhpSettings(db, account.id)} />
      <Certificates accountId={account.id} autoSsl={account.is_auto_ssl_enabled} domains={overview.domains} />
      <Backups account={{ id: account.id, username: account.username }} status={overview.backup} runs={restorePoints.runs} runsError={restorePoints.error} />
      <AccountMove
        account={{ id: account.id, node: account.node }}
        move={account.move}
        targets={(await moveTargets(db)).filter((name) => name !== account.node)}
      />
      <AccountLifecycle account={{ id: account.id, username: account.username, suspended: account.is_suspended, node: account.node }} />
    </>
  );
}
