"use client";

import { ActionButton } from "@/components/action-button";
import { announce } from "@/components/status-message";
import { Badge } from "@/components/status";
import type { MailDomainRecord } from "@/lib/email/schemas";
import { CertificateState } from "../domains/domain-facts";
import { rotateDkimKeyAction } from "./actions";

type Check = MailDomainRecord["dns"]["mx"];

const STATUS: Record<Check["status"], { tone: "ok" | "trouble" | "neutral"; label: string }> = {
  ok: { tone: "ok", label: "OK" },
  missing: { tone: "trouble", label: "Missing" },
  different: { tone: "trouble", label: "Different" },
  no_key: { tone: "neutral", label: "No key" },
};

/** One record mail needs: its state, and (opened) where it is, what it should hold and what the zone holds. */
function DnsCheck({ kind, check }: { kind: string; check: Check }) {
  const { tone, label } = STATUS[check.status];
  return (
    <details className="dns-check" data-testid={`dns-${kind.toLowerCase()}`}>
      <summary>
        <Badge tone={tone}>{label}</Badge>
      </summary>
      {check.status === "no_key" ? (
        <p className="muted">No DKIM key: this domain&apos;s mail is not signed. Rotating makes its first key (on a server that runs a mail server).</p>
      ) : (
        <dl>
          <dt>
            {check.type} at
          </dt>
          <dd>
            <code>{check.name}</code>
          </dd>
          <dt>Expected</dt>
          <dd>
            <code>{check.expected}</code>
          </dd>
          <dt>Found</dt>
          <dd>
            {check.found.length === 0 ? (
              <span className="muted">nothing</span>
            ) : (
              check.found.map((value) => (
                <div key={value}>
                  <code>{value}</code>
                </div>
              ))
            )}
          </dd>
        </dl>
      )}
    </details>
  );
}

/**
 * The account's mail domains: each record mail needs in its zone (MX, SPF, DKIM, DMARC) against
 * what the zone holds, the key its mail is signed with, the certificate of its host name
 * mail.<domain> (AutoSSL's, shown to mail clients), and "Rotate DKIM key" (`canRotate`: the
 * account's machine runs a mail server, where the key is made).
 */
export function MailDomains({ accountId, mailDomains, canRotate }: { accountId: number; mailDomains: MailDomainRecord[]; canRotate: boolean }) {
  return (
    <div className="table-scroll">
      <table className="data">
        <thead>
          <tr>
            <th>Domain</th>
            <th>MX</th>
            <th>SPF</th>
            <th>DKIM</th>
            <th>DMARC</th>
            <th>Certificate</th>
            <th aria-label="Actions" />
          </tr>
        </thead>
        <tbody>
          {mailDomains.length === 0 && (
            <tr>
              <td colSpan={7} className="muted">
                No mail domains yet: add one below, or make a mailbox or an alias in one of the account&apos;s domains.
              </td>
            </tr>
          )}
          {mailDomains.map((mailDomain) => (
            <tr key={mailDomain.id} data-testid={`mail-domain-${mailDomain.domain}`}>
              <td data-label="Domain">
                <strong>{mailDomain.domain}</strong>
                {mailDomain.dkim.selector && <div className="muted">DKIM selector {mailDomain.dkim.selector}</div>}
              </td>
              <td data-label="MX">
                <DnsCheck kind="MX" check={mailDomain.dns.mx} />
              </td>
              <td data-label="SPF">
                <DnsCheck kind="SPF" check={mailDomain.dns.spf} />
              </td>
              <td data-label="DKIM">
                <DnsCheck kind="DKIM" check={mailDomain.dns.dkim} />
              </td>
              <td data-label="DMARC">
                <DnsCheck kind="DMARC" check={mailDomain.dns.dmarc} />
              </td>
              <td data-label="Certificate" data-testid="mail-certificate">
                <div className="muted">
                  <code>mail.{mailDomain.domain}</code>
                </div>
                <CertificateState ssl={mailDomain.ssl} />
              </td>
              <td data-label="Actions">
                {canRotate && (
                  <ActionButton<string | null>
                    label="Rotate DKIM key"
                    subject={mailDomain.domain}
                    ariaLabel={`Rotate the DKIM key of ${mailDomain.domain}`}
                    confirm={`Rotate the DKIM key of ${mailDomain.domain}?\n\nA new key is made on the account's server and published in the zone before it signs; the old key's record stays published 7 days, so mail signed with it still verifies.`}
                    action={() => rotateDkimKeyAction(accountId, mailDomain.id)}
                    done={(selector) => announce(`DKIM key of ${mailDomain.domain} rotated: its mail is signed with selector ${selector ?? "—"}; the old key stays published 7 days.`)}
                  />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
