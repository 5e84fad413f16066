import { getDb } from "@/db/client";
import { listDomains } from "@/lib/domains/service";
import { env } from "@/lib/env";
import { errorResponse } from "@/lib/http/respond";
import { domainOperations } from "@/lib/domains/operations";

// GET /api/bench/account-domains?account=ID — bench only (PANEL_BENCH_ROUTES=1): the query of
// GET /api/client/domains without authentication, to price the key check.
export async function GET(request: Request) {
  if (!env().benchRoutes) return errorResponse(404, "No API operation at /api/bench/account-domains");
  const accountId = Number(new URL(request.url).searchParams.get("account"));
  const domains = await listDomains(await getDb(), accountId);
  return Response.json(domainOperations.list.response.parse(domains));
}
