import { withApiKey } from "@/lib/http/with-api-key";
import { metricsOperations } from "@/lib/metrics/operations";
import { getMetricsHistory } from "@/lib/metrics/service";

// GET /api/metrics/history — CPU and RAM samples, newest first (cached 60 s per limit); ?node= a node's
export const GET = withApiKey(metricsOperations.history, ({ query }) => getMetricsHistory(query.limit, query.node));
