import { notImplemented } from "@/lib/http/with-api-key";
import { metricsOperations } from "@/lib/metrics/operations";

// GET /api/metrics/stats — averages, minima and maxima of CPU, cores, RAM, disks and networks (cached 60 s)
export const GET = notImplemented(metricsOperations.stats);
