"use server";

import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { createDnsRecordBodySchema, updateDnsRecordBodySchema } from "@/lib/dns/schemas";
import { createDnsRecord, deleteDnsRecord, updateDnsRecord } from "@/lib/dns/service";
import { idField } from "@/lib/http/operation";
import { accountPaths } from "../paths";
import type { DnsRecordCreateFormInput, DnsRecordEditFormInput } from "./schemas";

// Server actions of an account's DNS pages: the services of /api/client/dns-records, with the
// admin session checked by runAdminFormAction. Each answers the zone file's warning, if any (the
// change is saved either way).

export async function createDnsRecordAction(accountId: number, input: DnsRecordCreateFormInput) {
  const account = idField.parse(accountId);
  return runAdminFormAction(
    accountPaths(account).dns,
    (db) => createDnsRecord(db, account, createDnsRecordBodySchema.parse(input)),
    (record) => record.warning ?? null,
  );
}

export async function updateDnsRecordAction(accountId: number, recordId: number, input: DnsRecordEditFormInput) {
  const account = idField.parse(accountId);
  return runAdminFormAction(
    accountPaths(account).dns,
    (db) => updateDnsRecord(db, account, idField.parse(recordId), updateDnsRecordBodySchema.parse(input)),
    (record) => record.warning ?? null,
  );
}

export async function deleteDnsRecordAction(accountId: number, recordId: number) {
  const account = idField.parse(accountId);
  return runAdminFormAction(
    accountPaths(account).dns,
    (db) => deleteDnsRecord(db, account, idField.parse(recordId)),
    (outcome) => outcome.warning ?? null,
  );
}
