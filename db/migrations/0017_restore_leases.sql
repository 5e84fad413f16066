-- One restore per account at a time, across panel instances: a lease row while it runs.
CREATE TABLE "restore_leases" (
	"account_id" integer PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "restore_leases" ADD CONSTRAINT "restore_leases_account_id_hosting_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."hosting_accounts"("id") ON DELETE cascade ON UPDATE no action;