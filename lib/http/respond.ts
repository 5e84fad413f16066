import { z } from "zod";
import { AppError, type AppErrorCode, type FieldErrors, pgErrorCode } from "@/lib/errors";

const statusOfCode: Record<AppErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  VALIDATION: 422,
  INTERNAL: 500,
  NOT_IMPLEMENTED: 501,
  UNAVAILABLE: 503,
};

export function json(body: unknown, status = 200, headers?: HeadersInit): Response {
  return Response.json(body, { status, headers });
}

/**
 * Every error body: `{ error }`; a 422 always adds `errors` per field (DESIGN.md "HTTP
 * contract"), empty when the failure is not one field's (GoAccess, the database server).
 */
export function errorResponse(
  status: number,
  message: string,
  errors?: FieldErrors,
  headers?: HeadersInit,
): Response {
  if (status === 422) errors ??= {};
  return json(errors ? { error: message, errors } : { error: message }, status, headers);
}

/** Field errors of a zod failure, keyed by dotted path ("" for the whole body). */
export function fieldErrorsOf(error: z.ZodError): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    const field = issue.path.join(".") || "body";
    (errors[field] ??= []).push(issue.message);
  }
  return errors;
}

export function validationMessage(errors: FieldErrors): string {
  const [field, messages] = Object.entries(errors)[0] ?? ["body", ["is invalid"]];
  return `Validation failed: ${field}: ${messages[0]}`;
}

/** Maps anything a handler threw to its response; unexpected errors are logged, not shown. */
export function toErrorResponse(error: unknown, context: string): Response {
  if (error instanceof AppError) {
    if (error.code === "INTERNAL") console.error(`[api] ${context}: ${error.message}`, error.cause ?? "");
    return errorResponse(statusOfCode[error.code], error.message, error.fieldErrors);
  }
  if (error instanceof z.ZodError) {
    const errors = fieldErrorsOf(error);
    return errorResponse(422, validationMessage(errors), errors);
  }
  const pgCode = pgErrorCode(error);
  if (pgCode === "23505") return errorResponse(422, "A record with this name already exists");
  if (pgCode === "23503") return errorResponse(409, "The record is still referenced by another record");
  if (pgCode === "22003") return errorResponse(422, "A number is out of range");
  console.error(`[api] ${context} failed:`, error);
  return errorResponse(500, `${context} could not complete because of an internal error`);
}
