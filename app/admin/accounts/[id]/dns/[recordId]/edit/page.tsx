import type { Metadata } from "next";
import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { getDnsRecordOrThrow } from "@/lib/dns/service";
import { getDomainOrThrow } from "@/lib/domains/service";
import { AccountHeader } from "../../../account-header";
import { accountPaths } from "../../../paths";
import { EditRecordForm } from "../../record-forms";

export const metadata: Metadata = { title: "Edit DNS record" };

export default async function EditDnsRecordPage({ params }: { params: Promise<{ id: string; recordId: string }> }) {
  const { db } = await requireAdminSession();
  const { id, recordId } = await params;
  const account = await recordOr404(id, (accountId) => getAccount(db, accountId));
  const record = await recordOr404(recordId, (recordIdNumber) => getDnsRecordOrThrow(db, { accountId: account.id, id: recordIdNumber }));
  const zone = await getDomainOrThrow(db, { accountId: account.id, id: record.domain_id });
  const shown = record.name === "@" ? zone.domain : `${record.name}.${zone.domain}`;
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "DNS records", href: `${accountPaths(account.id).dns}?domain=${zone.id}` }, { label: `${record.type} ${shown}` }]}
        title={`Edit the ${record.type} record ${shown}`}
      />
      {record.type === "SOA" ? (
        <p>The SOA record is the panel&apos;s own: it changes with every change of the zone.</p>
      ) : (
        <EditRecordForm
          accountId={account.id}
          recordId={record.id}
          zone={{ id: zone.id, domain: zone.domain }}
          initial={{
            type: record.type,
            name: record.name,
            content: record.content,
            ttl: record.ttl,
            priority: record.priority ?? undefined,
            weight: record.weight ?? undefined,
            port: record.port ?? undefined,
          }}
        />
      )}
    </>
  );
}
