import { z } from "zod";
import { defineOperation, idParams, messageResponse } from "@/lib/http/operation";
import { zoneWarningField } from "@/lib/dns/schemas";
import { createDomainBodySchema, domainRecordSchema, updateDomainBodySchema } from "./schemas";

const tag = "Domains";

export const domainOperations = {
  list: defineOperation({
    operationId: "listDomains",
    method: "GET",
    path: "/api/client/domains",
    audience: "client",
    tag,
    summary: "The account's domains, subdomains and parked domains",
    response: z.array(domainRecordSchema),
    successStatus: 200,
    errorStatuses: [],
  }),
  create: defineOperation({
    operationId: "createDomain",
    method: "POST",
    path: "/api/client/domains",
    audience: "client",
    tag,
    summary: "Add a domain, subdomain or parked domain (its DNS zone is provisioned)",
    body: createDomainBodySchema,
    response: domainRecordSchema.extend(zoneWarningField),
    successStatus: 201,
    errorStatuses: [400, 422],
  }),
  get: defineOperation({
    operationId: "getDomain",
    method: "GET",
    path: "/api/client/domains/{id}",
    audience: "client",
    tag,
    summary: "One domain",
    params: idParams,
    response: domainRecordSchema,
    successStatus: 200,
    errorStatuses: [404],
  }),
  update: defineOperation({
    operationId: "updateDomain",
    method: "PUT",
    path: "/api/client/domains/{id}",
    audience: "client",
    tag,
    summary: "Change how the domain's site is served: site_profile (php, static, proxy) and proxy_socket (the application's unix socket in the home's run/ folder)",
    params: idParams,
    body: updateDomainBodySchema,
    response: domainRecordSchema,
    successStatus: 200,
    errorStatuses: [400, 404, 422],
  }),
  delete: defineOperation({
    operationId: "deleteDomain",
    method: "DELETE",
    path: "/api/client/domains/{id}",
    audience: "client",
    tag,
    summary: "Delete a domain, its zone and its site (its files stay in the home directory)",
    params: idParams,
    response: messageResponse,
    successStatus: 200,
    errorStatuses: [404, 422],
  }),
};
