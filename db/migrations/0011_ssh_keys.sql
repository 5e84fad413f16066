CREATE TABLE "ssh_keys" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "ssh_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"name" text NOT NULL,
	"key_type" text NOT NULL,
	"key_data" text NOT NULL,
	"fingerprint" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ssh_keys_account_fingerprint_unique" UNIQUE("account_id","fingerprint")
);
--> statement-breakpoint
ALTER TABLE "ssh_keys" ADD CONSTRAINT "ssh_keys_account_id_hosting_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."hosting_accounts"("id") ON DELETE cascade ON UPDATE no action;