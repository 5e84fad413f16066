CREATE TYPE "public"."account_move_state" AS ENUM('queued', 'preparing', 'copying', 'switching', 'cleaning', 'done', 'cancelling', 'cancelled');--> statement-breakpoint
CREATE TABLE "account_moves" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "account_moves_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"source_node_id" integer NOT NULL,
	"target_node_id" integer NOT NULL,
	"state" "account_move_state" DEFAULT 'queued' NOT NULL,
	"repository" text NOT NULL,
	"repository_password" text,
	"copy_snapshots" text,
	"final_snapshots" text,
	"error" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"lease_holder" text,
	"lease_expires_at" timestamp with time zone,
	"switched_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "account_moves" ADD CONSTRAINT "account_moves_account_id_hosting_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."hosting_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_moves" ADD CONSTRAINT "account_moves_source_node_id_nodes_id_fk" FOREIGN KEY ("source_node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_moves" ADD CONSTRAINT "account_moves_target_node_id_nodes_id_fk" FOREIGN KEY ("target_node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "account_moves_one_open_idx" ON "account_moves" USING btree ("account_id") WHERE "account_moves"."state" not in ('done', 'cancelled');--> statement-breakpoint
CREATE INDEX "account_moves_source_idx" ON "account_moves" USING btree ("source_node_id","state");