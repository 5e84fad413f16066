import { env } from "@/lib/env";
import { errorResponse } from "@/lib/http/respond";

const constant = { ok: true };

// GET /api/bench/bare — bench only (PANEL_BENCH_ROUTES=1): constant JSON, the baseline
export function GET() {
  if (!env().benchRoutes) return errorResponse(404, "No API operation at /api/bench/bare");
  return Response.json(constant);
}
