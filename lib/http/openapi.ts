import { z } from "zod";
import type { Operation } from "./operation";
import { operations } from "./registry";

const errorSchema = {
  type: "object",
  required: ["error"],
  properties: { error: { type: "string" } },
};

/** A 422 always carries `errors`: messages per field (empty when no one field is at fault). */
const validationErrorSchema = {
  type: "object",
  required: ["error", "errors"],
  properties: {
    error: { type: "string" },
    errors: { type: "object", additionalProperties: { type: "array", items: { type: "string" } } },
  },
};

const statusText: Record<number, string> = {
  400: "Bad request: malformed JSON, or X-Hosting-Account missing for an admin or reseller key",
  401: "Missing or invalid API key or secret",
  403: "Key disabled, address or endpoint not allowed, or wrong scope for this operation",
  404: "Not found, or not owned by the account",
  409: "Conflict: linked records, or an Idempotency-Key whose first request is still running",
  422: "Validation error or failed operation",
  500: "Internal error",
  501: "Not implemented yet",
  413: "Request body larger than 1 MiB",
  503: "The database or a provisioning server is unavailable; retry after Retry-After seconds",
};

const toSchema = (schema: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(schema, { io, target: "draft-2020-12", unrepresentable: "any" });

function parametersOf(operation: Operation) {
  const parameters: object[] = [];
  for (const [location, schema] of [
    ["path", operation.params],
    ["query", operation.query],
  ] as const) {
    if (!schema) continue;
    const json = toSchema(schema, "input") as { properties?: Record<string, object>; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      const pathId = location === "path" ? { type: "integer", minimum: 1 } : property;
      parameters.push({
        name,
        in: location,
        required: location === "path" || (json.required ?? []).includes(name),
        schema: pathId,
      });
    }
  }
  if (operation.audience === "client") {
    parameters.push({
      name: "X-Hosting-Account",
      in: "header",
      required: false,
      description: "Id or username of the account to act on; required with admin and reseller keys",
      schema: { type: "string" },
    });
  }
  if (operation.idempotent) {
    parameters.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description:
        "Up to 255 characters, unique per request (per API key, kept 24 h): a retry with the same key and body " +
        "answers the first answer and changes nothing; the same key with another body is a 422; while the first " +
        "request still runs, a retry waits for it or answers 409",
      schema: { type: "string", maxLength: 255 },
    });
  }
  return parameters;
}

function operationObject(operation: Operation) {
  const responses: Record<string, object> = {
    [operation.successStatus]: {
      description: "Success",
      content: { "application/json": { schema: toSchema(operation.response, "output") } },
    },
  };
  // Any operation may meet a database that is away (503); any body may be too large (413).
  const statuses = new Set([
    401,
    403,
    503,
    ...(operation.audience === "client" ? [400, 404] : []),
    ...(operation.body ? [413] : []),
    ...operation.errorStatuses,
  ]);
  for (const status of [...statuses].sort()) {
    responses[status] = {
      description: statusText[status] ?? "Error",
      content: {
        "application/json": { schema: { $ref: `#/components/schemas/${status === 422 ? "ValidationError" : "Error"}` } },
      },
    };
  }
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    tags: [operation.tag],
    parameters: parametersOf(operation),
    ...(operation.body && {
      requestBody: {
        required: !operation.bodyOptional,
        content: { "application/json": { schema: toSchema(operation.body, "input") } },
      },
    }),
    responses,
    security: [{ ApiKeyAuth: [], ApiSecretAuth: [] }],
  };
}

/** GET /api/openapi.json: the registry as an OpenAPI 3.1 document. */
export function buildOpenApiDocument(serverUrl: string) {
  const paths: Record<string, Record<string, object>> = {};
  for (const operation of operations) {
    (paths[operation.path] ??= {})[operation.method.toLowerCase()] = operationObject(operation);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Hosting Control Panel REST API",
      version: "0.0.1",
      description:
        "Admin operations (SSO, server metrics) and client operations scoped to one hosting account. " +
        "Authenticate with X-API-Key and X-API-Secret; admin and reseller keys name the account in X-Hosting-Account.",
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      schemas: { Error: errorSchema, ValidationError: validationErrorSchema },
      securitySchemes: {
        ApiKeyAuth: { type: "apiKey", in: "header", name: "X-API-Key" },
        ApiSecretAuth: { type: "apiKey", in: "header", name: "X-API-Secret" },
      },
    },
    security: [{ ApiKeyAuth: [], ApiSecretAuth: [] }],
  };
}
