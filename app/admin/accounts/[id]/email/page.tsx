import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import type { Queryable } from "@/db/client";
import { UsageBar } from "@/components/usage-bar";
import { listDomains } from "@/lib/domains/service";
import { listAliases, listMailboxes, listMailDomains } from "@/lib/email/service";
import { accountMailRecord, mailSentCounts } from "@/lib/email/sending";
import { mailClientSettings } from "@/lib/email/settings";
import { listQueryFromUrl, pageOfList } from "@/lib/list-query";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { mailServerEnabled } from "@/lib/provisioning/mail";
import { AccountHeader } from "../account-header";
import { accountOfPage, type AccountPageProps } from "../account-page";
import { accountPaths } from "../paths";
import { AliasesTable, MailboxesTable } from "./mailboxes-table";
import { MailFlag } from "./mail-flag";
import { AddMailDomainForm } from "./mail-forms";
import { MailDomains } from "./mail-domains";

export const metadata: Metadata = { title: "Email" };

const count = (value: number) => value.toLocaleString("en-US");

/** "12 of 100 messages"; "12 messages (no limit)"; the limit alone when the account's machine did not answer. */
function sentText(sent: number | null, limit: number | null): string {
  if (sent === null) return limit === null ? "no limit" : `at most ${count(limit)} messages (the count is unknown: its server did not answer)`;
  return limit === null ? `${count(sent)} messages (no limit)` : `${count(sent)} of ${count(limit)} messages`;
}

/**
 * The messages sent in the last hour and day, against the plan's limits: counted by the account's
 * machine, so asked of it (a node's answer may take seconds, or not come): the rest of the tab is
 * shown at once, and these two follow as they come.
 */
async function SentCounts({ db, accountId, username, limits }: { db: Queryable; accountId: number; username: string; limits: { per_hour: number | null; per_day: number | null } }) {
  const counts = await mailSentCounts(db, accountId, username);
  return <SentFigures hour={sentText(counts.sent_last_hour, limits.per_hour)} day={sentText(counts.sent_today, limits.per_day)} />;
}

function SentFigures({ hour, day }: { hour: string; day: string }) {
  return (
    <>
      <div>
        <div className="muted">Sent in the last hour</div>
        <div data-testid="mail-sent-hour">{hour}</div>
      </div>
      <div>
        <div className="muted">Sent in the last 24 hours</div>
        <div data-testid="mail-sent-day">{day}</div>
      </div>
    </>
  );
}

/** On the Email tab of an account on this machine while it runs no mail server: how to run one. */
function MailServerNotice({ node }: { node: string }) {
  if (node !== LOCAL_NODE || mailServerEnabled()) return null;
  return (
    <p className="notice" role="note" data-testid="mail-unconfigured">
      This server runs no mail server: set MAIL_SERVER=1 (with SYSTEM_USERS=1) in the panel&apos;s configuration, set up Postfix, Dovecot and rspamd
      as the panel&apos;s docs/email.md says, and restart it. Until then mail domains, mailboxes and aliases are records only: no mail is received
      or sent, and no DKIM key is made.
    </p>
  );
}

/** What a customer types into a mail client (docs/email.md "Sending"), for a mailbox of `domain`. */
function HowToConnect({ domain, others }: { domain: string | null; others: string[] }) {
  if (domain === null) {
    return <p className="muted">Once the account has a mail domain, its mail clients connect to mail.&lt;domain&gt;.</p>;
  }
  const settings = mailClientSettings(domain);
  return (
    <>
      <dl className="summary" data-testid="mail-settings">
        <div>
          <dt className="muted">Incoming (IMAP)</dt>
          <dd>
            <code>{settings.imap.host}</code>, port {settings.imap.port}, SSL/TLS
          </dd>
        </div>
        <div>
          <dt className="muted">Incoming (POP3)</dt>
          <dd>
            <code>{settings.pop3.host}</code>, port {settings.pop3.port}, SSL/TLS
          </dd>
        </div>
        <div>
          <dt className="muted">Outgoing (SMTP)</dt>
          <dd>
            <code>{settings.smtp.host}</code>, port {settings.smtp.ports[0]} with STARTTLS or {settings.smtp.ports[1]} with SSL/TLS; sign-in required
          </dd>
        </div>
        <div>
          <dt className="muted">User name and password</dt>
          <dd>The full address and the mailbox&apos;s password</dd>
        </div>
      </dl>
      <p className="hint">
        {others.length > 0 && <>A mailbox of {others.join(", ")} may use mail.&lt;its domain&gt; the same way. </>}
        A mail client is shown mail.&lt;domain&gt;&apos;s own certificate once AutoSSL has made it (its state is in the list of mail domains above), else
        the server&apos;s: then a client that checks the name should use the server&apos;s host name instead.
      </p>
    </>
  );
}

// The account's email: mail domains with the DNS records mail needs, mailboxes, aliases and
// catch-alls (the services of /api/client/email), what a mail client is told, and the plan's limits.
export default async function AccountEmailPage({ params, searchParams }: AccountPageProps) {
  const { db, account } = await accountOfPage(params);
  const search = await searchParams;
  const [mailDomains, mailboxes, aliases, domains, sending] = await Promise.all([
    listMailDomains(db, account.id),
    listMailboxes(db, account.id),
    listAliases(db, account.id),
    listDomains(db, account.id),
    accountMailRecord(db, account.id),
  ]);
  const paths = accountPaths(account.id);
  const mailboxQuery = listQueryFromUrl(search, "mailboxes");
  const aliasQuery = listQueryFromUrl(search, "aliases");
  const mailboxPage = pageOfList(mailboxes, mailboxQuery, (mailbox) => mailbox.address);
  const aliasPage = pageOfList(aliases, aliasQuery, (alias) => `${alias.address} ${alias.targets.join(" ")}`);
  const mailNames = mailDomains.map((mailDomain) => mailDomain.domain);
  const notMailYet = domains.map((domain) => domain.domain).filter((domain) => !mailNames.includes(domain));
  const connectDomain = mailNames.includes(account.domain) ? account.domain : (mailNames[0] ?? null);
  const { plan } = account;
  const allotted = mailboxes.reduce((sum, mailbox) => sum + mailbox.quota_mb, 0);
  const canRotate = account.node !== LOCAL_NODE || mailServerEnabled();
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "Email" }]}
        title={`Email of “${account.username}”`}
        action={
          <Link className="button primary" href={`${paths.email}/mailboxes/create`}>
            Add mailbox
          </Link>
        }
      />
      <MailServerNotice node={account.node} />
      {sending.flagged_at !== null && <MailFlag accountId={account.id} username={account.username} flaggedAt={sending.flagged_at} />}

      <section className="card" aria-labelledby="mail-limits-heading">
        <h2 id="mail-limits-heading">
          Limits of the plan <Link className="heading-link" href={`/admin/plans/${plan.id}/edit`}>{plan.name}</Link>
        </h2>
        <div className="usage-grid">
          <div>
            <div className="muted">Space given to mailboxes</div>
            <UsageBar label="Space given to mailboxes" used={allotted} limit={plan.mail_quota_mb} unit="MB" />
          </div>
          <div>
            <div className="muted">Mailboxes</div>
            <div data-testid="mailbox-count">{plan.mailboxes === null ? `${mailboxes.length} (no limit)` : `${mailboxes.length} of ${plan.mailboxes}`}</div>
          </div>
          <Suspense fallback={<SentFigures hour="asking its server…" day="asking its server…" />}>
            <SentCounts db={db} accountId={account.id} username={account.username} limits={sending.limits} />
          </Suspense>
        </div>
      </section>

      <section className="card" aria-labelledby="mail-connect-heading">
        <h2 id="mail-connect-heading">How to connect</h2>
        <HowToConnect domain={connectDomain} others={mailNames.filter((name) => name !== connectDomain)} />
      </section>

      <section className="card" aria-labelledby="mail-domains-heading">
        <h2 id="mail-domains-heading">Mail domains</h2>
        <p className="muted">
          Each record mail needs in the domain&apos;s zone, against what the zone holds (open a state to see both; the records are changed on the{" "}
          <Link href={paths.dns}>DNS</Link> tab).
        </p>
        <MailDomains accountId={account.id} mailDomains={mailDomains} canRotate={canRotate} />
        {notMailYet.length > 0 && (
          <div style={{ marginTop: "1rem" }}>
            <AddMailDomainForm key={notMailYet.join(" ")} accountId={account.id} domains={notMailYet} />
          </div>
        )}
      </section>

      <section className="card" aria-labelledby="mailboxes-heading">
        <h2 id="mailboxes-heading">Mailboxes</h2>
        <MailboxesTable accountId={account.id} rows={mailboxPage.rows} total={mailboxPage.total} page={mailboxQuery.page} perPage={mailboxQuery.per_page} search={mailboxQuery.search} />
      </section>

      <section className="card" aria-labelledby="aliases-heading">
        <h2 id="aliases-heading">
          Aliases and catch-alls{" "}
          <Link className="heading-link" href={`${paths.email}/aliases/create`}>
            Add alias
          </Link>
        </h2>
        <AliasesTable accountId={account.id} rows={aliasPage.rows} total={aliasPage.total} page={aliasQuery.page} perPage={aliasQuery.per_page} search={aliasQuery.search} />
      </section>
    </>
  );
}
