CREATE TYPE "public"."certificate_kind" AS ENUM('site', 'mail');--> statement-breakpoint
ALTER TABLE "domain_certificates" ADD COLUMN "kind" "certificate_kind" DEFAULT 'site' NOT NULL;--> statement-breakpoint
ALTER TABLE "domain_certificates" DROP CONSTRAINT "domain_certificates_pkey";--> statement-breakpoint
ALTER TABLE "domain_certificates" ADD CONSTRAINT "domain_certificates_domain_id_kind_pk" PRIMARY KEY("domain_id","kind");
