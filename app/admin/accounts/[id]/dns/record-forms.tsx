"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import type { Path } from "react-hook-form";
import { AdminForm, type AnyForm, InputField, numberOrUndefined, SelectField, useAdminForm } from "@/components/form";
import { createDnsRecordBodySchema, EDITABLE_RECORD_TYPES } from "@/lib/dns/schemas";
import { accountPaths } from "../paths";
import { createDnsRecordAction, updateDnsRecordAction } from "./actions";
import { type DnsRecordCreateFormInput, dnsRecordEditFormSchema, type DnsRecordEditFormInput } from "./schemas";

const CONTENT_HINTS: Record<string, string> = {
  A: "An IPv4 address, e.g. 203.0.113.10",
  AAAA: "An IPv6 address, e.g. 2001:db8::10",
  CNAME: "The host name this name stands for, e.g. example.net",
  MX: "The mail server's host name, e.g. mail.example.com",
  NS: "A name server's host name",
  SRV: "The target host name, e.g. sip.example.com",
  TXT: "Any text, e.g. v=spf1 mx -all",
};

type RecordValues = { type: string; name: string; content: string; ttl: number; priority?: number; weight?: number; port?: number };

/** The fields of a record, after its zone: the ones its type uses. */
function RecordFields<Values extends RecordValues>({ form, zone }: { form: AnyForm<Values>; zone: string }) {
  const type = form.watch("type" as Path<Values>) as string;
  const field = (name: keyof RecordValues) => name as Path<Values>;
  return (
    <div className="form-grid">
      <SelectField form={form} name={field("type")} label="Type" choices={EDITABLE_RECORD_TYPES.map((value) => ({ value, label: value }))} />
      <InputField form={form} name={field("name")} label="Name" autoComplete="off" placeholder="www" hint={`Within ${zone}: www for www.${zone}, @ for ${zone} itself.`} />
      <InputField form={form} name={field("content")} label="Content" autoComplete="off" hint={CONTENT_HINTS[type]} />
      <InputField form={form} name={field("ttl")} label="TTL (seconds)" type="number" min={60} max={86400} options={{ valueAsNumber: true }} hint="How long resolvers may keep it: 60 to 86400." />
      {(type === "MX" || type === "SRV") && (
        <InputField form={form} name={field("priority")} label="Priority" type="number" min={0} max={65535} options={numberOrUndefined} hint="Lower is tried first." />
      )}
      {type === "SRV" && <InputField form={form} name={field("weight")} label="Weight" type="number" min={0} max={65535} options={numberOrUndefined} />}
      {type === "SRV" && <InputField form={form} name={field("port")} label="Port" type="number" min={0} max={65535} options={numberOrUndefined} />}
    </div>
  );
}

/** After a save: the zone's records, or the zone file's warning first when there is one. */
function useSaved(list: string) {
  const router = useRouter();
  const [warning, setWarning] = useState<string | null>(null);
  const saved = (zoneWarning: string | null) => {
    if (zoneWarning) return setWarning(zoneWarning);
    router.push(list);
    router.refresh();
  };
  return { warning, saved };
}

function SavedWithWarning({ warning, list }: { warning: string; list: string }) {
  return (
    <div className="notice" role="status">
      <p>{warning}</p>
      <a className="button" href={list}>
        Back to the records
      </a>
    </div>
  );
}

export function CreateRecordForm({ accountId, zones, zoneId }: { accountId: number; zones: { id: number; domain: string }[]; zoneId: number }) {
  const [zone, setZone] = useState(zoneId);
  const list = `${accountPaths(accountId).dns}?domain=${zone}`;
  const { warning, saved } = useSaved(list);
  const { form, message, onSubmit } = useAdminForm({
    schema: createDnsRecordBodySchema,
    defaultValues: { domain_id: zoneId, type: "A", name: "", content: "", ttl: 3600 } as DnsRecordCreateFormInput,
    save: (values) => createDnsRecordAction(accountId, values),
    doneHref: list,
    done: (values) => `${values.type} record ${values.name} added.`,
    onSaved: saved,
  });
  if (warning) return <SavedWithWarning warning={warning} list={list} />;
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Add record" cancelHref={list}>
      <SelectField
        form={form}
        name="domain_id"
        label="Zone"
        choices={zones.map((choice) => ({ value: String(choice.id), label: choice.domain }))}
        options={{ ...numberOrUndefined, onChange: (event) => setZone(Number(event.target.value)) }}
      />
      <RecordFields form={form} zone={zones.find((choice) => choice.id === zone)?.domain ?? ""} />
    </AdminForm>
  );
}

export function EditRecordForm({ accountId, recordId, zone, initial }: { accountId: number; recordId: number; zone: { id: number; domain: string }; initial: DnsRecordEditFormInput }) {
  const list = `${accountPaths(accountId).dns}?domain=${zone.id}`;
  const { warning, saved } = useSaved(list);
  const { form, message, onSubmit } = useAdminForm({
    schema: dnsRecordEditFormSchema,
    defaultValues: initial,
    save: (values) => updateDnsRecordAction(accountId, recordId, values),
    doneHref: list,
    done: () => "DNS record saved.",
    onSaved: saved,
  });
  if (warning) return <SavedWithWarning warning={warning} list={list} />;
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Save Changes" cancelHref={list}>
      <RecordFields form={form} zone={zone.domain} />
    </AdminForm>
  );
}
