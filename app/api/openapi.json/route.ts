import { env } from "@/lib/env";
import { buildOpenApiDocument } from "@/lib/http/openapi";

let document: ReturnType<typeof buildOpenApiDocument> | undefined;

// GET /api/openapi.json — the API description (no credentials needed)
export function GET() {
  document ??= buildOpenApiDocument(env().publicUrl);
  return Response.json(document);
}
