import { notImplemented } from "@/lib/http/with-api-key";
import { metricsOperations } from "@/lib/metrics/operations";

// GET /api/metrics/system-info — live system information (cached 60 s)
export const GET = notImplemented(metricsOperations.systemInfo);
