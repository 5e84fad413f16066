CREATE TABLE "mail_aliases" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "mail_aliases_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"mail_domain_id" integer NOT NULL,
	"local_part" text NOT NULL,
	"address" text NOT NULL,
	"targets" text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "mail_aliases_address_unique" UNIQUE("address")
);
--> statement-breakpoint
CREATE TABLE "mail_domains" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "mail_domains_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"domain_id" integer NOT NULL,
	"domain" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "mail_domains_domain_id_unique" UNIQUE("domain_id"),
	CONSTRAINT "mail_domains_domain_unique" UNIQUE("domain")
);
--> statement-breakpoint
CREATE TABLE "mailboxes" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "mailboxes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"mail_domain_id" integer NOT NULL,
	"local_part" text NOT NULL,
	"address" text NOT NULL,
	"password_hash" text NOT NULL,
	"quota_mb" integer NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "mailboxes_address_unique" UNIQUE("address")
);
--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "mailboxes" integer;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "mail_quota_mb" integer;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "mail_per_hour" integer;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "mail_per_day" integer;--> statement-breakpoint
ALTER TABLE "mail_aliases" ADD CONSTRAINT "mail_aliases_account_id_hosting_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."hosting_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mail_aliases" ADD CONSTRAINT "mail_aliases_mail_domain_id_mail_domains_id_fk" FOREIGN KEY ("mail_domain_id") REFERENCES "public"."mail_domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mail_domains" ADD CONSTRAINT "mail_domains_account_id_hosting_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."hosting_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mail_domains" ADD CONSTRAINT "mail_domains_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mailboxes" ADD CONSTRAINT "mailboxes_account_id_hosting_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."hosting_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mailboxes" ADD CONSTRAINT "mailboxes_mail_domain_id_mail_domains_id_fk" FOREIGN KEY ("mail_domain_id") REFERENCES "public"."mail_domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "mail_aliases_account_id_idx" ON "mail_aliases" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "mail_domains_account_id_idx" ON "mail_domains" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "mailboxes_account_id_idx" ON "mailboxes" USING btree ("account_id");