import { withApiKey } from "@/lib/http/with-api-key";
import { metricsOperations } from "@/lib/metrics/operations";
import { getSystemInfo } from "@/lib/metrics/service";

// GET /api/metrics/system-info — live system information (cached 60 s); ?node= read on that node
export const GET = withApiKey(metricsOperations.systemInfo, ({ query }) => getSystemInfo(query.node));
