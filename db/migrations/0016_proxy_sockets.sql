-- The proxy profile passes requests to a unix socket in the account's home, HOME/run/<proxy_socket>,
-- instead of a local port that any account could bind (docs/applications.md "Why a socket, not a
-- port"). Each proxied domain keeps its profile and gets the socket port-<its old port>.sock, where
-- its application must now listen; until it does, the site answers 502 Bad Gateway.
ALTER TABLE "domains" ADD COLUMN "proxy_socket" text;--> statement-breakpoint
UPDATE "domains" SET "proxy_socket" = CASE WHEN "proxy_port" IS NULL THEN 'app.sock' ELSE 'port-' || "proxy_port" || '.sock' END WHERE "site_profile" = 'proxy';--> statement-breakpoint
ALTER TABLE "domains" DROP COLUMN "proxy_port";--> statement-breakpoint
ALTER TABLE "domains" ADD CONSTRAINT "domains_proxy_socket" CHECK (("domains"."site_profile" = 'proxy') = ("domains"."proxy_socket" IS NOT NULL));
