-- The backup status belongs to the account (by id, gone with it), no longer to its username: a
-- later account reusing the username starts with none. Existing rows follow their account.
ALTER TABLE "account_backups" ADD COLUMN "account_id" integer;--> statement-breakpoint
UPDATE "account_backups" SET "account_id" = "hosting_accounts"."id" FROM "hosting_accounts" WHERE "hosting_accounts"."username" = "account_backups"."username";--> statement-breakpoint
DELETE FROM "account_backups" WHERE "account_id" IS NULL;--> statement-breakpoint
ALTER TABLE "account_backups" DROP COLUMN "username";--> statement-breakpoint
ALTER TABLE "account_backups" ADD PRIMARY KEY ("account_id");--> statement-breakpoint
ALTER TABLE "account_backups" ADD CONSTRAINT "account_backups_account_id_hosting_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."hosting_accounts"("id") ON DELETE cascade ON UPDATE no action;
