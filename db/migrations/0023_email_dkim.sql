CREATE TABLE "mail_dkim_keys" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "mail_dkim_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"mail_domain_id" integer NOT NULL,
	"selector" text NOT NULL,
	"public_key" text NOT NULL,
	"state" text NOT NULL,
	"retired_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "mail_dkim_keys_domain_selector_unique" UNIQUE("mail_domain_id","selector")
);
--> statement-breakpoint
ALTER TABLE "mail_dkim_keys" ADD CONSTRAINT "mail_dkim_keys_mail_domain_id_mail_domains_id_fk" FOREIGN KEY ("mail_domain_id") REFERENCES "public"."mail_domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "mail_dkim_keys_signing_idx" ON "mail_dkim_keys" USING btree ("mail_domain_id") WHERE "mail_dkim_keys"."state" = 'signing';--> statement-breakpoint
CREATE INDEX "mail_dkim_keys_retired_at_idx" ON "mail_dkim_keys" USING btree ("retired_at");