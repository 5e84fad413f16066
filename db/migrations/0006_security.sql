ALTER TABLE "admin_users" ADD COLUMN "is_enabled" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "admin_users" ADD COLUMN "session_generation" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Admin sessions end on the very next request on every instance: a change to who may hold a
-- session bumps auth_generation (0004), which every session check reads (lib/auth/key-cache.ts).
CREATE TRIGGER admin_users_auth_changed
  AFTER DELETE OR UPDATE OF email, name, password_hash, is_enabled, session_generation
  ON admin_users FOR EACH STATEMENT EXECUTE FUNCTION panel_auth_changed();
