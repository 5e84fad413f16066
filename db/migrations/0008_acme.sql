CREATE TYPE "public"."ssl_status" AS ENUM('off', 'pending', 'active', 'failed');--> statement-breakpoint
CREATE TABLE "domain_certificates" (
	"domain_id" integer PRIMARY KEY NOT NULL,
	"status" "ssl_status" DEFAULT 'pending' NOT NULL,
	"names" text[] DEFAULT '{}' NOT NULL,
	"expires_at" timestamp with time zone,
	"error" text,
	"failures" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"renew_requested" boolean DEFAULT false NOT NULL,
	"issuing_until" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "domain_certificates" ADD CONSTRAINT "domain_certificates_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;