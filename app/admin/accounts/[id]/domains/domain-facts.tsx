import { Badge, Failure } from "@/components/status";
import { Time } from "@/components/time";
import type { DomainRecord } from "@/lib/domains/service";

// How a domain's site and certificate read wherever they are listed (the account's overview, its
// Domains page): the same words and the same trouble.

/** "PHP 8.3", "PHP (no version chosen)", "static files", "proxy to run/app.sock". */
export function SiteProfile({ domain }: { domain: Pick<DomainRecord, "site_profile" | "proxy_socket" | "php_version" | "is_php_fpm_enabled"> }) {
  if (domain.site_profile === "static") return <>static files</>;
  if (domain.site_profile === "proxy") return <>proxy to <code>run/{domain.proxy_socket}</code></>;
  if (!domain.php_version) return <span className="muted">PHP, no version chosen</span>;
  return <>{domain.is_php_fpm_enabled ? `PHP ${domain.php_version.version}` : <span className="muted">PHP {domain.php_version.version} (off)</span>}</>;
}

/** The certificate: active until when, on its way, failed with AutoSSL's reason, or none. */
export function CertificateState({ ssl }: { ssl: DomainRecord["ssl"] }) {
  if (ssl.status === "failed") {
    return (
      <>
        <Failure reason={ssl.error ?? undefined} />
        {ssl.expires_at && (
          <div className="muted">
            The previous one is served until <Time at={ssl.expires_at} />
          </div>
        )}
      </>
    );
  }
  if (ssl.status === "active") {
    return (
      <>
        <Badge tone="ok">Active</Badge> until <Time at={ssl.expires_at} />
      </>
    );
  }
  return ssl.status === "pending" ? <Badge tone="neutral">Pending</Badge> : <span className="muted">None</span>;
}
