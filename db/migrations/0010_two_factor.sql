CREATE TABLE "admin_recovery_codes" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "admin_recovery_codes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"admin_user_id" integer NOT NULL,
	"code_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "admin_users" ADD COLUMN "totp_secret" text;--> statement-breakpoint
ALTER TABLE "admin_users" ADD COLUMN "totp_pending_secret" text;--> statement-breakpoint
ALTER TABLE "admin_users" ADD COLUMN "totp_last_step" integer;--> statement-breakpoint
ALTER TABLE "admin_recovery_codes" ADD CONSTRAINT "admin_recovery_codes_admin_user_id_admin_users_id_fk" FOREIGN KEY ("admin_user_id") REFERENCES "public"."admin_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "admin_recovery_codes_admin_hash_idx" ON "admin_recovery_codes" USING btree ("admin_user_id","code_hash");--> statement-breakpoint
-- Whether an admin has two-factor sign-in is part of what a session is checked against (the
-- ADMIN_2FA_REQUIRED set-up gate), so turning it on or off invalidates the auth caches too.
DROP TRIGGER admin_users_auth_changed ON admin_users;--> statement-breakpoint
CREATE TRIGGER admin_users_auth_changed
  AFTER DELETE OR UPDATE OF email, name, password_hash, is_enabled, session_generation, totp_secret
  ON admin_users FOR EACH STATEMENT EXECUTE FUNCTION panel_auth_changed();
