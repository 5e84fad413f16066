import type { Metadata } from "next";
import Link from "next/link";
import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { getDomainOrThrow } from "@/lib/domains/service";
import { listPhpVersions } from "@/lib/php/service";
import { AccountHeader } from "../../../account-header";
import { accountPaths } from "../../../paths";
import { CertificateState } from "../../domain-facts";
import { EditDomainForm } from "../../domain-forms";
import { phpVersionChoices } from "../../php-choices";

export const metadata: Metadata = { title: "Edit domain" };

export default async function EditDomainPage({ params }: { params: Promise<{ id: string; domainId: string }> }) {
  const { db } = await requireAdminSession();
  const { id, domainId } = await params;
  const account = await recordOr404(id, (accountId) => getAccount(db, accountId));
  const domain = await recordOr404(domainId, (domainIdNumber) => getDomainOrThrow(db, { accountId: account.id, id: domainIdNumber }));
  const paths = accountPaths(account.id);
  return (
    <>
      <AccountHeader db={db} account={account} trail={[{ label: "Domains", href: paths.domains }, { label: domain.domain }]} title={`Edit domain “${domain.domain}”`} />
      <section className="card summary" aria-label="Domain">
        <div>
          <div className="muted">Type</div>
          <div>{domain.domain_type}</div>
        </div>
        <div>
          <div className="muted">Document root</div>
          <div>{domain.domain_path ? <code>{domain.domain_path}</code> : "its domain's"}</div>
        </div>
        <div>
          <div className="muted">Certificate</div>
          <div>
            <CertificateState ssl={domain.ssl} />
          </div>
        </div>
        <div>
          <div className="muted">DNS</div>
          <div>
            <Link href={`${paths.dns}?domain=${domain.id}`}>Its DNS records</Link>
          </div>
        </div>
      </section>
      {domain.domain_type === "parked" ? (
        <p>A parked domain shows the site of the domain it is parked on: change that domain instead.</p>
      ) : (
        <EditDomainForm
          accountId={account.id}
          domainId={domain.id}
          initial={{
            site_profile: domain.site_profile,
            proxy_socket: domain.proxy_socket,
            php_version_id: domain.php_version?.id ?? null,
            is_php_fpm_enabled: domain.is_php_fpm_enabled,
          }}
          phpVersions={phpVersionChoices(await listPhpVersions(db))}
        />
      )}
    </>
  );
}
