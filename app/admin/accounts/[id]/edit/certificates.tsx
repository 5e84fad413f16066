import { autoSslConfigured } from "@/lib/autossl/job";
import type { DomainRecord } from "@/lib/domains/service";
import { renewCertificateAction } from "../../actions";

const STATUS_LABEL = { off: "None", pending: "Pending", active: "Active", failed: "Failed" } as const;

/** The account's domains with their certificates (AutoSSL), and "Renew now" per domain. */
export function Certificates({ accountId, autoSsl, domains }: { accountId: number; autoSsl: boolean; domains: DomainRecord[] }) {
  const canRenew = autoSsl && autoSslConfigured();
  return (
    <section className="card" style={{ marginTop: "1.5rem" }} aria-labelledby="certificates-heading">
      <h2 id="certificates-heading">Certificates</h2>
      <p className="muted">
        {!autoSslConfigured()
          ? "AutoSSL is not configured on this server (ACME_DIRECTORY_URL, see README “HTTPS”)."
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
              <th>Expires</th>
              <th aria-label="Actions" />
            </tr>
          </thead>
          <tbody>
            {domains.map((domain) => (
              <tr key={domain.id}>
                <td>{domain.domain}</td>
                <td>{domain.domain_type}</td>
                <td>
                  <span className={`badge${domain.ssl.status === "active" ? " on" : domain.ssl.status === "failed" ? " off" : ""}`}>
                    {STATUS_LABEL[domain.ssl.status]}
                  </span>
                  {domain.ssl.error && <div className="muted">{domain.ssl.error}</div>}
                </td>
                <td>{domain.ssl.expires_at ? domain.ssl.expires_at.slice(0, 10) : "—"}</td>
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
