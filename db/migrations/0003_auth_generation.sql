CREATE TABLE "auth_generation" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"value" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "auth_generation_single_row" CHECK ("auth_generation"."id" = 1)
);
