-- Admin sign-in attempts counted in the database, per address and per e-mail, shared by every
-- instance (lib/admin-session/sign-in-throttle.ts).
CREATE TABLE "sign_in_attempts" (
	"subject" text PRIMARY KEY NOT NULL,
	"attempts" integer NOT NULL,
	"window_started_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "sign_in_attempts_window_started_at_idx" ON "sign_in_attempts" USING btree ("window_started_at");--> statement-breakpoint
-- An admin key belongs to an admin: it works while that admin is enabled and goes with them
-- (ON DELETE CASCADE instead of SET NULL, which turned a removed admin's keys into keys of the
-- first admin). Reseller and account keys belong to their reseller or account, not to the admin
-- who happened to make them.
ALTER TABLE "api_keys" RENAME COLUMN "created_by_admin_id" TO "owner_admin_id";--> statement-breakpoint
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_created_by_admin_id_admin_users_id_fk";--> statement-breakpoint
UPDATE "api_keys" SET "owner_admin_id" = NULL WHERE "scope" <> 'admin';--> statement-breakpoint
-- Admin keys an admin made whose admin is gone (SET NULL left them ownerless): they go, as they
-- would have with the admin.
DELETE FROM "api_keys" WHERE "scope" = 'admin' AND "owner_admin_id" IS NULL AND EXISTS (
  SELECT 1 FROM "audit_log"
  WHERE "audit_log"."action" = 'api_key.create' AND "audit_log"."target_id" = "api_keys"."id" AND "audit_log"."actor_type" = 'admin_user'
);--> statement-breakpoint
-- Admin keys made on the command line belonged to the first admin (SSO signed in as them): they
-- keep that owner, so existing SSO integrations sign in as before.
UPDATE "api_keys" SET "owner_admin_id" = (SELECT min("id") FROM "admin_users") WHERE "scope" = 'admin' AND "owner_admin_id" IS NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_owner_admin_id_admin_users_id_fk" FOREIGN KEY ("owner_admin_id") REFERENCES "public"."admin_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_owner_admin_scope" CHECK ("api_keys"."owner_admin_id" IS NULL OR "api_keys"."scope" = 'admin');
