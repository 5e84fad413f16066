import { z } from "zod";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/**
 * Who may call an operation: admin keys only; admin and reseller keys (the account lifecycle
 * operations, DESIGN.md: the handler keeps a reseller to its own accounts); or any key acting
 * on one hosting account.
 */
export type Audience = "admin" | "reseller" | "client";

/**
 * One API operation, declared once. The same declaration drives request parsing and response
 * filtering (lib/http/with-api-key.ts), the 404/405 route table (server.ts), the endpoint list
 * a restricted key is chosen from, and GET /api/openapi.json.
 */
export interface Operation<
  Params extends z.ZodType = z.ZodType,
  Query extends z.ZodType = z.ZodType,
  Body extends z.ZodType = z.ZodType,
  Response extends z.ZodType = z.ZodType,
> {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI path template: "/api/client/databases/{id}". */
  path: string;
  audience: Audience;
  /** Resource group, used for OpenAPI tags and the key form's checklist. */
  tag: string;
  summary: string;
  params?: Params;
  query?: Query;
  body?: Body;
  /** The body may be left out entirely (POST /api/metrics/clear-cache). */
  bodyOptional?: boolean;
  response: Response;
  /** 202: accepted, the work goes on after the answer (a backup now). */
  successStatus: 200 | 201 | 202;
  /** Error statuses this operation answers besides the authentication ones. */
  errorStatuses: readonly number[];
  /** Honours an `Idempotency-Key` header: a retry gets the first answer (lib/idempotency). */
  idempotent?: boolean;
}

/** Declares an operation, keeping its literal types (audience, schemas) for the handler's context. */
export function defineOperation<const Op extends Operation>(operation: Op): Op {
  return operation;
}

/** "GET /api/client/databases/{id}": how a key's endpoint list names an operation. */
export const endpointOf = (operation: Pick<Operation, "method" | "path">) =>
  `${operation.method} ${operation.path}`;

// Shared pieces of request schemas.

/** A path id: a positive integer. Anything else is answered 404 (there is no such record). */
export const idParam = z
  .string()
  .regex(/^[1-9][0-9]{0,9}$/)
  .transform(Number)
  .pipe(z.number().max(2147483647));
export const idParams = z.object({ id: idParam });

/** An id in a JSON body (`domain_id`, `database_id`…): a positive integer within int4. */
export const idField = z.number().int().positive().max(2147483647);

/** `{ message }`: the answer of deletes and actions. */
export const messageResponse = z.object({ message: z.string() });

/** created_at/updated_at on the wire: ISO-8601 strings (services convert dates). */
export const timestamp = z.iso.datetime();

/**
 * An object of optional fields in which any other field is a 422 naming it, with a message of
 * the caller's (`explain`) — clearer than a bare "unrecognized key" for fields a client may not set.
 */
export function onlyFields<Shape extends z.ZodRawShape>(shape: Shape, explain: (field: string) => string) {
  const known = z.object(shape).partial();
  return z
    .looseObject(known.shape)
    .superRefine((body, ctx) => {
      for (const field of Object.keys(body)) {
        if (!(field in shape)) ctx.addIssue({ code: "custom", path: [field], message: explain(field) });
      }
    })
    .transform((body) => known.parse(body));
}
