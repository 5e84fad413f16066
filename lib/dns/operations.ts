import { z } from "zod";
import { defineOperation, idParams, messageResponse } from "@/lib/http/operation";
import { createDnsRecordBodySchema, dnsListQuerySchema, dnsRecordSchema, updateDnsRecordBodySchema } from "./schemas";

const tag = "DNS records";

export const dnsOperations = {
  list: defineOperation({
    operationId: "listDnsRecords",
    method: "GET",
    path: "/api/client/dns-records",
    audience: "client",
    tag,
    summary: "Records of one of the account's zones",
    query: dnsListQuerySchema,
    response: z.array(dnsRecordSchema),
    successStatus: 200,
    errorStatuses: [404, 422],
  }),
  create: defineOperation({
    operationId: "createDnsRecord",
    method: "POST",
    path: "/api/client/dns-records",
    audience: "client",
    tag,
    summary: "Add a record to one of the account's zones",
    body: createDnsRecordBodySchema,
    response: dnsRecordSchema,
    successStatus: 201,
    errorStatuses: [400, 404, 422],
  }),
  get: defineOperation({
    operationId: "getDnsRecord",
    method: "GET",
    path: "/api/client/dns-records/{id}",
    audience: "client",
    tag,
    summary: "One record",
    params: idParams,
    response: dnsRecordSchema,
    successStatus: 200,
    errorStatuses: [404],
  }),
  update: defineOperation({
    operationId: "updateDnsRecord",
    method: "PUT",
    path: "/api/client/dns-records/{id}",
    audience: "client",
    tag,
    summary: "Change a record (not SOA; its domain never changes)",
    params: idParams,
    body: updateDnsRecordBodySchema,
    response: dnsRecordSchema,
    successStatus: 200,
    errorStatuses: [400, 403, 404, 422],
  }),
  delete: defineOperation({
    operationId: "deleteDnsRecord",
    method: "DELETE",
    path: "/api/client/dns-records/{id}",
    audience: "client",
    tag,
    summary: "Delete a record (not SOA)",
    params: idParams,
    response: messageResponse,
    successStatus: 200,
    errorStatuses: [403, 404, 422],
  }),
};
