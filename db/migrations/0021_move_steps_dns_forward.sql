ALTER TYPE "public"."account_move_state" ADD VALUE 'forwarding' BEFORE 'done';--> statement-breakpoint
ALTER TABLE "account_moves" ADD COLUMN "steps" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "account_moves" ADD COLUMN "record_ttls" jsonb;--> statement-breakpoint
ALTER TABLE "account_moves" ADD COLUMN "caches_clear_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "account_moves" ADD COLUMN "forward_until" timestamp with time zone;