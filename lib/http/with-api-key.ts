import { createHash } from "node:crypto";
import { z } from "zod";
import { getDb } from "@/db/client";
import { AuthFailure, authenticate, type Principal } from "@/lib/auth/authenticate";
import type { AccountRef } from "@/lib/auth/key-cache";
import { AppError } from "@/lib/errors";
import { IDEMPOTENCY_FIELD, runOnce } from "@/lib/idempotency/service";
import { type Accepted, isAccepted } from "./accepted";
import { BodyTooLargeError, readBoundedText } from "./body";
import { clientAddressOf } from "./client-address";
import type { Operation } from "./operation";
import { errorResponse, fieldErrorsOf, json, toErrorResponse, validationMessage } from "./respond";
import { responseShaper } from "./response-shape";

type Parsed<Op, Key extends "params" | "query" | "body"> = Op extends { [K in Key]: infer S extends z.ZodType }
  ? z.output<S>
  : undefined;

export interface ApiContext<Op extends Operation> {
  principal: Principal;
  params: Parsed<Op, "params">;
  query: Parsed<Op, "query">;
  /** Absent (undefined) only when the operation's body is optional and none was sent. */
  body: Op extends { bodyOptional: true } ? Parsed<Op, "body"> | undefined : Parsed<Op, "body">;
  request: Request;
}

/** Client operations always run inside one hosting account. */
export interface ClientApiContext<Op extends Operation> extends ApiContext<Op> {
  account: AccountRef;
}

type ContextFor<Op extends Operation> = Op extends { audience: "client" } ? ClientApiContext<Op> : ApiContext<Op>;

type RouteContext = { params: Promise<Record<string, string | string[]>> };

class RequestError extends Error {
  constructor(readonly response: Response) {
    super("request rejected");
  }
}

async function readBody(request: Request, operation: Operation): Promise<unknown> {
  if (!operation.body) return undefined;
  let text: string;
  try {
    text = await readBoundedText(request);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new RequestError(errorResponse(413, error.message));
    throw error;
  }
  if (text.trim() === "") {
    if (operation.bodyOptional) return undefined;
    throw new RequestError(errorResponse(400, "A JSON body is required"));
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new RequestError(errorResponse(400, "The body is not valid JSON"));
  }
}

function parseOrReject(schema: z.ZodType | undefined, value: unknown) {
  if (!schema) return undefined;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const errors = fieldErrorsOf(parsed.error);
  throw new RequestError(errorResponse(422, validationMessage(errors), errors));
}

/**
 * The one way into the API: authenticates the key for this operation (lib/auth/authenticate),
 * parses params (a bad id is a 404), query and body (422 with field errors, 400 for bad JSON),
 * runs the handler — once per Idempotency-Key where the operation honours one — and sends its
 * result copied by the response schema, so no column leaks (lib/http/response-shape.ts).
 * Everything that depends only on the operation is built here, once, not per request.
 */
export function withApiKey<Op extends Operation>(
  operation: Op,
  handler: (context: ContextFor<Op>) => Promise<z.input<Op["response"]> | Accepted<z.input<Op["response"]>>>,
) {
  const context = `${operation.method} ${operation.path}`;
  const shapeResponse = responseShaper(operation.response);
  return async (request: Request, route: RouteContext): Promise<Response> => {
    try {
      const { principal, account } = await authenticate(
        operation,
        {
          apiKey: request.headers.get("x-api-key"),
          apiSecret: request.headers.get("x-api-secret"),
          hostingAccount: request.headers.get("x-hosting-account"),
        },
        clientAddressOf(request),
      );

      let params: unknown;
      if (operation.params) {
        const parsed = operation.params.safeParse(await route.params);
        if (!parsed.success) return errorResponse(404, "Not found");
        params = parsed.data;
      }
      const query = operation.query
        ? parseOrReject(operation.query, Object.fromEntries(new URL(request.url).searchParams))
        : undefined;
      const rawBody = await readBody(request, operation);
      // An optional body that was left out stays undefined (ApiContext's type says so).
      const body = rawBody === undefined ? undefined : parseOrReject(operation.body, rawBody);

      const answer = async () => {
        try {
          const result = await handler({ principal, account, params, query, body, request } as ContextFor<Op>);
          // 202: recorded, carried out later (an account's node that does not answer now).
          if (isAccepted(result)) return json(shapeResponse(result.body), 202);
          return json(shapeResponse(result), operation.successStatus);
        } catch (error) {
          return toErrorResponse(error, context);
        }
      };
      const idempotencyKey = operation.idempotent ? request.headers.get("idempotency-key") : null;
      if (idempotencyKey === null) return await answer();
      return await answerOnce(
        { apiKeyId: principal.keyId, key: idempotencyKey, request: [operation.method, new URL(request.url).pathname.replace(/\/$/, ""), body ?? null] },
        answer,
      );
    } catch (error) {
      if (error instanceof AuthFailure) return errorResponse(error.status, error.message);
      if (error instanceof RequestError) return error.response;
      return toErrorResponse(error, context);
    }
  };
}

/**
 * Idempotency-Key: the first answer for (key, header value) is kept, and a retry of the same
 * request receives exactly it, marked `Idempotent-Replayed: true` (lib/idempotency/service.ts).
 */
async function answerOnce(
  claim: { apiKeyId: number; key: string; request: unknown },
  answer: () => Promise<Response>,
): Promise<Response> {
  if (claim.key.trim() === "" || claim.key.length > 255) {
    const message = "must be 1 to 255 characters";
    throw new RequestError(errorResponse(422, `${IDEMPOTENCY_FIELD} ${message}`, { [IDEMPOTENCY_FIELD]: [message] }));
  }
  // The request that runs answers with its own response (headers such as Retry-After included).
  let fresh: Response | null = null;
  const stored = await runOnce(
    await getDb(),
    { apiKeyId: claim.apiKeyId, key: claim.key, requestHash: createHash("sha256").update(JSON.stringify(claim.request)).digest("hex") },
    async () => {
      fresh = await answer();
      return { status: fresh.status, body: await fresh.clone().text() };
    },
  );
  return (
    fresh ??
    new Response(stored.body, {
      status: stored.status,
      headers: { "content-type": "application/json", "idempotent-replayed": "true" },
    })
  );
}

/** The handler of an operation a later piece of work implements: 501, never fake data. */
export function notImplemented(operation: Operation) {
  return withApiKey(operation, async () => {
    throw new AppError("NOT_IMPLEMENTED", `${operation.method} ${operation.path} is not implemented yet`);
  });
}
