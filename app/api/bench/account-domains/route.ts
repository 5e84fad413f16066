import { getDb } from "@/db/client";
import { domainOperations } from "@/lib/domains/operations";
import { listDomains } from "@/lib/domains/service";
import { env } from "@/lib/env";
import { errorResponse, json } from "@/lib/http/respond";
import { responseShaper } from "@/lib/http/response-shape";

const shapeDomains = responseShaper(domainOperations.list.response);

// GET /api/bench/account-domains?account=ID — bench only (PANEL_BENCH_ROUTES=1): the query of
// GET /api/client/domains without authentication, to price the key check.
export async function GET(request: Request) {
  if (!env().benchRoutes) return errorResponse(404, "No API operation at /api/bench/account-domains");
  const accountId = Number(new URL(request.url).searchParams.get("account"));
  return json(shapeDomains(await listDomains(await getDb(), accountId)));
}
