import { notImplemented } from "@/lib/http/with-api-key";
import { metricsOperations } from "@/lib/metrics/operations";

// GET /api/metrics/history — cPU and RAM samples, newest first (cached 60 s per limit)
export const GET = notImplemented(metricsOperations.history);
