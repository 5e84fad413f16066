import { withApiKey } from "@/lib/http/with-api-key";
import { metricsOperations } from "@/lib/metrics/operations";
import { getMetricsStats } from "@/lib/metrics/service";

// GET /api/metrics/stats — averages, minima and maxima of the last 24 hours: CPU, cores, RAM, disks, networks (cached 60 s); ?node= a node's
export const GET = withApiKey(metricsOperations.stats, ({ query }) => getMetricsStats(query.node));
