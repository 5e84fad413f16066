ALTER TABLE "metric_samples" ADD COLUMN "node_id" integer;--> statement-breakpoint
ALTER TABLE "service_samples" ADD COLUMN "node_id" integer;--> statement-breakpoint
ALTER TABLE "metric_samples" ADD CONSTRAINT "metric_samples_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "service_samples" ADD CONSTRAINT "service_samples_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "metric_samples_node_taken_at_idx" ON "metric_samples" USING btree ("node_id","taken_at");--> statement-breakpoint
CREATE INDEX "service_samples_node_taken_at_idx" ON "service_samples" USING btree ("node_id","taken_at");