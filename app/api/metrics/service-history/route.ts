import { withApiKey } from "@/lib/http/with-api-key";
import { metricsOperations } from "@/lib/metrics/operations";
import { getServiceHistory } from "@/lib/metrics/service";

// GET /api/metrics/service-history — per-service CPU, memory and process samples, newest first (cached 60 s); ?node= a node's
export const GET = withApiKey(metricsOperations.serviceHistory, ({ query }) => getServiceHistory(query.limit, query.node));
