CREATE TYPE "public"."account_status" AS ENUM('active', 'suspended');--> statement-breakpoint
CREATE TYPE "public"."api_key_scope" AS ENUM('admin', 'reseller', 'account');--> statement-breakpoint
CREATE TYPE "public"."dns_record_type" AS ENUM('SOA', 'NS', 'A', 'AAAA', 'CNAME', 'MX', 'TXT', 'SRV');--> statement-breakpoint
CREATE TYPE "public"."domain_type" AS ENUM('domain', 'subdomain', 'parked');--> statement-breakpoint
CREATE TABLE "hosting_accounts" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "hosting_accounts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"username" text NOT NULL,
	"domain" text NOT NULL,
	"email" text,
	"name" text,
	"phone" text,
	"address" text,
	"city" text,
	"state" text,
	"zip" text,
	"country" text,
	"company" text,
	"is_auto_ssl_enabled" boolean DEFAULT false NOT NULL,
	"status" "account_status" DEFAULT 'active' NOT NULL,
	"has_ssh_access" boolean DEFAULT false NOT NULL,
	"plan_id" integer NOT NULL,
	"reseller_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "hosting_accounts_username_unique" UNIQUE("username"),
	CONSTRAINT "hosting_accounts_username_format" CHECK ("hosting_accounts"."username" ~ '^[a-z][a-z0-9_]{0,31}$')
);
--> statement-breakpoint
CREATE TABLE "plans" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "plans_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"max_databases" integer,
	"max_database_users" integer,
	"max_domains" integer,
	"max_dns_records" integer,
	"disk_mb" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "plans_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "resellers" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "resellers_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"username" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "resellers_username_unique" UNIQUE("username")
);
--> statement-breakpoint
CREATE TABLE "admin_users" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "admin_users_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"email" text NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "admin_users_email_unique" UNIQUE("email")
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "api_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"key" text NOT NULL,
	"secret_hash" text NOT NULL,
	"secret_start" text NOT NULL,
	"scope" "api_key_scope" NOT NULL,
	"reseller_id" integer,
	"account_id" integer,
	"created_by_admin_id" integer,
	"is_enabled" boolean DEFAULT true NOT NULL,
	"allowed_ips" text[] DEFAULT '{}'::text[] NOT NULL,
	"allow_all_endpoints" boolean DEFAULT true NOT NULL,
	"allowed_endpoints" text[] DEFAULT '{}'::text[] NOT NULL,
	"last_used_at" timestamp with time zone,
	"last_used_ip" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "api_keys_key_unique" UNIQUE("key"),
	CONSTRAINT "api_keys_secret_hash_unique" UNIQUE("secret_hash"),
	CONSTRAINT "api_keys_scope_target" CHECK (("api_keys"."scope" = 'admin' AND "api_keys"."reseller_id" IS NULL AND "api_keys"."account_id" IS NULL)
        OR ("api_keys"."scope" = 'reseller' AND "api_keys"."reseller_id" IS NOT NULL AND "api_keys"."account_id" IS NULL)
        OR ("api_keys"."scope" = 'account' AND "api_keys"."account_id" IS NOT NULL AND "api_keys"."reseller_id" IS NULL))
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "audit_log_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor_type" text NOT NULL,
	"actor_id" integer,
	"action" text NOT NULL,
	"target_type" text,
	"target_id" integer,
	"ip" text,
	"details" jsonb
);
--> statement-breakpoint
CREATE TABLE "customer_databases" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "customer_databases_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"database_name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "customer_databases_database_name_unique" UNIQUE("database_name"),
	CONSTRAINT "customer_databases_name_format" CHECK ("customer_databases"."database_name" ~ '^[A-Za-z0-9_]{1,64}$')
);
--> statement-breakpoint
CREATE TABLE "database_grants" (
	"database_user_id" integer NOT NULL,
	"database_id" integer NOT NULL,
	"privileges" text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "database_grants_database_user_id_database_id_pk" PRIMARY KEY("database_user_id","database_id")
);
--> statement-breakpoint
CREATE TABLE "database_users" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "database_users_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"username" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "database_users_username_unique" UNIQUE("username"),
	CONSTRAINT "database_users_name_format" CHECK ("database_users"."username" ~ '^[A-Za-z0-9_]{1,50}$')
);
--> statement-breakpoint
CREATE TABLE "dns_records" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "dns_records_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"domain_id" integer NOT NULL,
	"name" text NOT NULL,
	"type" "dns_record_type" NOT NULL,
	"content" text NOT NULL,
	"ttl" integer NOT NULL,
	"priority" integer,
	"weight" integer,
	"port" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dns_records_ttl_range" CHECK ("dns_records"."ttl" BETWEEN 60 AND 86400)
);
--> statement-breakpoint
CREATE TABLE "domains" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "domains_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"domain" text NOT NULL,
	"domain_type" "domain_type" NOT NULL,
	"domain_path" text,
	"parent_domain_id" integer,
	"subdomain" text,
	"parked_on_domain_id" integer,
	"php_version_id" integer,
	"is_php_fpm_enabled" boolean DEFAULT false NOT NULL,
	"soa_serial" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "domains_domain_unique" UNIQUE("domain"),
	CONSTRAINT "domains_type_links" CHECK (("domains"."domain_type" = 'subdomain') = ("domains"."parent_domain_id" IS NOT NULL)
        AND ("domains"."domain_type" = 'parked') = ("domains"."parked_on_domain_id" IS NOT NULL))
);
--> statement-breakpoint
CREATE TABLE "metric_cpu_core_samples" (
	"sample_id" integer NOT NULL,
	"core" text NOT NULL,
	"percent" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "metric_disk_samples" (
	"sample_id" integer NOT NULL,
	"device" text NOT NULL,
	"mounted_on" text NOT NULL,
	"used_bytes" bigint NOT NULL,
	"size_bytes" bigint NOT NULL,
	"used_percent" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "metric_network_samples" (
	"sample_id" integer NOT NULL,
	"interface" text NOT NULL,
	"rx_bytes" bigint NOT NULL,
	"rx_packets" bigint NOT NULL,
	"tx_bytes" bigint NOT NULL,
	"tx_packets" bigint NOT NULL,
	"rx_drops" bigint NOT NULL,
	"rx_errors" bigint NOT NULL,
	"tx_drops" bigint NOT NULL,
	"tx_errors" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "metric_samples" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "metric_samples_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"taken_at" timestamp with time zone DEFAULT now() NOT NULL,
	"cpu_percent" double precision NOT NULL,
	"ram_percent" double precision NOT NULL,
	"ram_total_mb" double precision NOT NULL,
	"ram_used_mb" double precision NOT NULL,
	"ram_free_mb" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "service_samples" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "service_samples_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"taken_at" timestamp with time zone DEFAULT now() NOT NULL,
	"service_name" text NOT NULL,
	"cpu_percent" double precision NOT NULL,
	"memory_mb" double precision NOT NULL,
	"memory_percent" double precision NOT NULL,
	"process_count" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "php_versions" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "php_versions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"version" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "php_versions_version_unique" UNIQUE("version")
);
--> statement-breakpoint
CREATE TABLE "sso_tokens" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "sso_tokens_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"token_hash" text NOT NULL,
	"admin_user_id" integer NOT NULL,
	"api_key_id" integer,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sso_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
ALTER TABLE "hosting_accounts" ADD CONSTRAINT "hosting_accounts_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hosting_accounts" ADD CONSTRAINT "hosting_accounts_reseller_id_resellers_id_fk" FOREIGN KEY ("reseller_id") REFERENCES "public"."resellers"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_reseller_id_resellers_id_fk" FOREIGN KEY ("reseller_id") REFERENCES "public"."resellers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_hosting_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."hosting_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_created_by_admin_id_admin_users_id_fk" FOREIGN KEY ("created_by_admin_id") REFERENCES "public"."admin_users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "customer_databases" ADD CONSTRAINT "customer_databases_account_id_hosting_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."hosting_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "database_grants" ADD CONSTRAINT "database_grants_database_user_id_database_users_id_fk" FOREIGN KEY ("database_user_id") REFERENCES "public"."database_users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "database_grants" ADD CONSTRAINT "database_grants_database_id_customer_databases_id_fk" FOREIGN KEY ("database_id") REFERENCES "public"."customer_databases"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "database_users" ADD CONSTRAINT "database_users_account_id_hosting_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."hosting_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dns_records" ADD CONSTRAINT "dns_records_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "domains" ADD CONSTRAINT "domains_account_id_hosting_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."hosting_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "domains" ADD CONSTRAINT "domains_parent_domain_id_domains_id_fk" FOREIGN KEY ("parent_domain_id") REFERENCES "public"."domains"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "domains" ADD CONSTRAINT "domains_parked_on_domain_id_domains_id_fk" FOREIGN KEY ("parked_on_domain_id") REFERENCES "public"."domains"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "domains" ADD CONSTRAINT "domains_php_version_id_php_versions_id_fk" FOREIGN KEY ("php_version_id") REFERENCES "public"."php_versions"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "metric_cpu_core_samples" ADD CONSTRAINT "metric_cpu_core_samples_sample_id_metric_samples_id_fk" FOREIGN KEY ("sample_id") REFERENCES "public"."metric_samples"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "metric_disk_samples" ADD CONSTRAINT "metric_disk_samples_sample_id_metric_samples_id_fk" FOREIGN KEY ("sample_id") REFERENCES "public"."metric_samples"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "metric_network_samples" ADD CONSTRAINT "metric_network_samples_sample_id_metric_samples_id_fk" FOREIGN KEY ("sample_id") REFERENCES "public"."metric_samples"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_tokens" ADD CONSTRAINT "sso_tokens_admin_user_id_admin_users_id_fk" FOREIGN KEY ("admin_user_id") REFERENCES "public"."admin_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_tokens" ADD CONSTRAINT "sso_tokens_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "hosting_accounts_reseller_id_idx" ON "hosting_accounts" USING btree ("reseller_id");--> statement-breakpoint
CREATE INDEX "api_keys_created_at_idx" ON "api_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "audit_log_at_idx" ON "audit_log" USING btree ("at");--> statement-breakpoint
CREATE INDEX "customer_databases_account_id_idx" ON "customer_databases" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "database_grants_database_id_idx" ON "database_grants" USING btree ("database_id");--> statement-breakpoint
CREATE INDEX "database_users_account_id_idx" ON "database_users" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "dns_records_domain_id_idx" ON "dns_records" USING btree ("domain_id");--> statement-breakpoint
CREATE INDEX "domains_account_id_idx" ON "domains" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "metric_cpu_core_samples_sample_id_idx" ON "metric_cpu_core_samples" USING btree ("sample_id");--> statement-breakpoint
CREATE INDEX "metric_disk_samples_sample_id_idx" ON "metric_disk_samples" USING btree ("sample_id");--> statement-breakpoint
CREATE INDEX "metric_network_samples_sample_id_idx" ON "metric_network_samples" USING btree ("sample_id");--> statement-breakpoint
CREATE INDEX "metric_samples_taken_at_idx" ON "metric_samples" USING btree ("taken_at");--> statement-breakpoint
CREATE INDEX "service_samples_taken_at_idx" ON "service_samples" USING btree ("taken_at");