import { sql } from "drizzle-orm";
import {
  type AnyPgColumn,
  bigint,
  boolean,
  check,
  index,
  integer,
  pgEnum,
  pgTable,
  text,
} from "drizzle-orm/pg-core";
import { hostingAccounts } from "./accounts";
import { createdAt, updatedAt } from "./columns";
import { phpVersions } from "./php";

export const domainType = pgEnum("domain_type", ["domain", "subdomain", "parked"]);

// How a domain's site is served (docs/applications.md "Site profiles"): PHP with a front controller,
// static files only, or a reverse proxy to a unix socket in the account's home.
export const siteProfile = pgEnum("site_profile", ["php", "static", "proxy"]);

export const domains = pgTable(
  "domains",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    accountId: integer("account_id")
      .notNull()
      .references(() => hostingAccounts.id, { onDelete: "cascade" }),
    // ASCII (punycode) form, lower case, no final dot; unique on the whole server.
    domain: text("domain").notNull().unique(),
    domainType: domainType("domain_type").notNull(),
    domainPath: text("domain_path"),
    parentDomainId: integer("parent_domain_id").references((): AnyPgColumn => domains.id, {
      onDelete: "restrict",
    }),
    subdomain: text("subdomain"),
    parkedOnDomainId: integer("parked_on_domain_id").references((): AnyPgColumn => domains.id, {
      onDelete: "restrict",
    }),
    phpVersionId: integer("php_version_id").references(() => phpVersions.id, {
      onDelete: "restrict",
    }),
    isPhpFpmEnabled: boolean("is_php_fpm_enabled").notNull().default(false),
    siteProfile: siteProfile("site_profile").notNull().default("php"),
    // The `proxy` profile's unix socket: a file name in the home's run/ (HOME/run/<name>), where
    // the account's application listens (lib/domains/service.ts). Set exactly for that profile.
    proxySocket: text("proxy_socket"),
    // SOA serial, YYYYMMDDnn, bumped on every change of the zone.
    soaSerial: bigint("soa_serial", { mode: "number" }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    // GET /api/client/domains: the account's domains.
    index("domains_account_id_idx").on(table.accountId),
    check("domains_proxy_socket", sql`(${table.siteProfile} = 'proxy') = (${table.proxySocket} IS NOT NULL)`),
    check(
      "domains_type_links",
      sql`(${table.domainType} = 'subdomain') = (${table.parentDomainId} IS NOT NULL)
        AND (${table.domainType} = 'parked') = (${table.parkedOnDomainId} IS NOT NULL)`,
    ),
  ],
);

export const dnsRecordType = pgEnum("dns_record_type", [
  "SOA",
  "NS",
  "A",
  "AAAA",
  "CNAME",
  "MX",
  "TXT",
  "SRV",
]);

export const dnsRecords = pgTable(
  "dns_records",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    domainId: integer("domain_id")
      .notNull()
      .references(() => domains.id, { onDelete: "cascade" }),
    // Relative to the zone: "@" for the apex, "www", "_sip._tcp".
    name: text("name").notNull(),
    type: dnsRecordType("type").notNull(),
    content: text("content").notNull(),
    ttl: integer("ttl").notNull(),
    priority: integer("priority"),
    weight: integer("weight"),
    port: integer("port"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    // GET /api/client/dns-records?domain_id=: a zone's records.
    index("dns_records_domain_id_idx").on(table.domainId),
    check("dns_records_ttl_range", sql`${table.ttl} BETWEEN 60 AND 86400`),
  ],
);
