CREATE TABLE "account_backups" (
	"username" text PRIMARY KEY NOT NULL,
	"last_success_at" timestamp with time zone,
	"last_failure_at" timestamp with time zone,
	"last_error" text,
	"snapshots" integer DEFAULT 0 NOT NULL,
	"size_bytes" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "backup_lease" (
	"id" integer PRIMARY KEY NOT NULL,
	"holder" text,
	"expires_at" timestamp with time zone NOT NULL
);
