import { withApiKey } from "@/lib/http/with-api-key";
import { metricsOperations } from "@/lib/metrics/operations";
import { clearMetricsCache } from "@/lib/metrics/service";

// POST /api/metrics/clear-cache — clear the metrics caches named in the body (?node=: that node's)
export const POST = withApiKey(metricsOperations.clearCache, ({ body, query }) => clearMetricsCache(body, query.node));
