CREATE TYPE "public"."node_job_state" AS ENUM('pending', 'done', 'failed');--> statement-breakpoint
CREATE TYPE "public"."node_state" AS ENUM('active', 'draining');--> statement-breakpoint
CREATE TABLE "node_jobs" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "node_jobs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"node_id" integer NOT NULL,
	"account_id" integer,
	"job_id" text NOT NULL,
	"kind" text NOT NULL,
	"payload" jsonb NOT NULL,
	"published_at" timestamp with time zone,
	"state" "node_job_state" DEFAULT 'pending' NOT NULL,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "node_jobs_job_id_unique" UNIQUE("job_id")
);
--> statement-breakpoint
CREATE TABLE "nodes" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "nodes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"ipv4" text,
	"ssh_host" text,
	"state" "node_state" DEFAULT 'active' NOT NULL,
	"public_key" text,
	"enrolment_token_hash" text,
	"enrolment_expires_at" timestamp with time zone,
	"last_heartbeat_at" timestamp with time zone,
	"agent_version" text,
	"protocol_version" integer,
	"disk" jsonb,
	"load" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "nodes_name_unique" UNIQUE("name"),
	CONSTRAINT "nodes_public_key_unique" UNIQUE("public_key"),
	CONSTRAINT "nodes_enrolment_token_hash_unique" UNIQUE("enrolment_token_hash"),
	CONSTRAINT "nodes_name_format" CHECK ("nodes"."name" ~ '^[a-z0-9][a-z0-9-]{0,30}$')
);
--> statement-breakpoint
-- The panel's own machine: the node of every account made before nodes existed.
INSERT INTO "nodes" ("name") VALUES ('local');--> statement-breakpoint
ALTER TABLE "hosting_accounts" ADD COLUMN "node_id" integer;--> statement-breakpoint
UPDATE "hosting_accounts" SET "node_id" = (SELECT "id" FROM "nodes" WHERE "name" = 'local');--> statement-breakpoint
ALTER TABLE "hosting_accounts" ALTER COLUMN "node_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "node_jobs" ADD CONSTRAINT "node_jobs_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "node_jobs_account_idx" ON "node_jobs" USING btree ("account_id","id");--> statement-breakpoint
ALTER TABLE "hosting_accounts" ADD CONSTRAINT "hosting_accounts_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "hosting_accounts_node_id_idx" ON "hosting_accounts" USING btree ("node_id");