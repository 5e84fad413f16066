import { notImplemented } from "@/lib/http/with-api-key";
import { metricsOperations } from "@/lib/metrics/operations";

// POST /api/metrics/clear-cache — clear the metrics caches named in the body
export const POST = notImplemented(metricsOperations.clearCache);
