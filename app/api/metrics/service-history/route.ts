import { withApiKey } from "@/lib/http/with-api-key";
import { metricsOperations } from "@/lib/metrics/operations";
import { getServiceHistory } from "@/lib/metrics/service";

// GET /api/metrics/service-history — per-service samples, newest first; all without `limit` (cached 60 s)
export const GET = withApiKey(metricsOperations.serviceHistory, ({ query }) => getServiceHistory(query.limit));
