import { autoSslConfigured } from "@/lib/autossl/job";
import type { DomainRecord } from "@/lib/domains/service";
import { renewCertificateAction } from "../../actions";
import { CertificateState } from "../domains/domain-facts";

/** The account's domains with their certificates (AutoSSL), and "Renew now" per domain. */
export function Certificates({ accountId, autoSsl, domains }: { accountId: number; autoSsl: boolean; domains: DomainRecord[] }) {
  const canRenew = autoSsl && autoSslConfigured();
  return (
    <section className="card" style={{ marginTop: "1.5rem" }} aria-labelledby="certificates-heading">
      <h2 id="certificates-heading">Certificates</h2>
      <p className="muted">
        {!autoSslConfigured()
          ? "This server issues no certificates: to turn AutoSSL on, set ACME_DIRECTORY_URL (e.g. https://acme-v02.api.letsencrypt.org/directory) and ACME_EMAIL in the panel's configuration and restart it."
          : autoSsl
            ? "AutoSSL is on: certificates are issued and renewed automatically; a failure is retried with back-off."
            : "AutoSSL is off for this account: no certificates are issued or renewed; installed ones stay until they expire."}
      </p>
      <div className="table-scroll">
        <table className="data">
          <thead>
            <tr>
              <th>Domain</th>
              <th>Type</th>
              <th>Certificate</th>
              <th aria-label="Actions" />
            </tr>
          </thead>
          <tbody>
            {domains.map((domain) => (
              <tr key={domain.id}>
                <td>{domain.domain}</td>
                <td>{domain.domain_type}</td>
                <td>
                  <CertificateState ssl={domain.ssl} />
                </td>
                <td>
                  {canRenew && (
                    <form action={renewCertificateAction.bind(null, accountId, domain.id)}>
                      <button type="submit" aria-label={`Renew the certificate of ${domain.domain} now`}>
                        Renew now
                      </button>
                    </form>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
