import { getDb } from "@/db/client";
import { BodyTooLargeError, readBoundedText } from "@/lib/http/body";
import { errorResponse, json, toErrorResponse } from "@/lib/http/respond";
import { joinNodeSchema } from "@/lib/nodes/schemas";
import { joinNode } from "@/lib/nodes/service";

// POST /api/nodes/join — `panel node join` on a node: its one-time enrolment token and public
// key. No API key: the token is the credential (32 random bytes, 15 minutes, used once).
export async function POST(request: Request): Promise<Response> {
  try {
    let body: unknown;
    try {
      body = JSON.parse(await readBoundedText(request));
    } catch (error) {
      if (error instanceof BodyTooLargeError) return errorResponse(413, error.message);
      return errorResponse(400, "The body is not valid JSON");
    }
    return json(await joinNode(await getDb(), joinNodeSchema.parse(body)));
  } catch (error) {
    return toErrorResponse(error, "POST /api/nodes/join");
  }
}
