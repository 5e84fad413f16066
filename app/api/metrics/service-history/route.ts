import { notImplemented } from "@/lib/http/with-api-key";
import { metricsOperations } from "@/lib/metrics/operations";

// GET /api/metrics/service-history — per-service CPU, memory and process samples, newest first (cached 60 s)
export const GET = notImplemented(metricsOperations.serviceHistory);
