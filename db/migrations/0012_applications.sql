CREATE TYPE "public"."site_profile" AS ENUM('php', 'static', 'proxy');--> statement-breakpoint
CREATE TABLE "cron_jobs" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "cron_jobs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"schedule" text NOT NULL,
	"command" text NOT NULL,
	"is_enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "php_settings" (
	"account_id" integer PRIMARY KEY NOT NULL,
	"upload_max_filesize_mb" integer NOT NULL,
	"post_max_size_mb" integer NOT NULL,
	"memory_limit_mb" integer NOT NULL,
	"max_execution_time_s" integer NOT NULL,
	"max_input_vars" integer NOT NULL,
	"display_errors" boolean NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "max_php_memory_mb" integer;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "max_php_upload_mb" integer;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "max_cron_jobs" integer;--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "site_profile" "site_profile" DEFAULT 'php' NOT NULL;--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "proxy_port" integer;--> statement-breakpoint
ALTER TABLE "cron_jobs" ADD CONSTRAINT "cron_jobs_account_id_hosting_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."hosting_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "php_settings" ADD CONSTRAINT "php_settings_account_id_hosting_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."hosting_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "cron_jobs_account_id_idx" ON "cron_jobs" USING btree ("account_id");