import { z } from "zod";
import {
  AppError,
  type AppErrorCode,
  DATABASE_UNAVAILABLE_MESSAGE,
  type FieldErrors,
  isDatabaseUnavailable,
  pgErrorCode,
  UnavailableError,
} from "@/lib/errors";

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

/** Seconds a client is asked to wait while the database is away (it is back within seconds). */
const DATABASE_RETRY_AFTER_S = 5;

/**
 * The one place that turns what a handler threw into an answer. Only AppError and validation
 * messages are written for the caller; anything else (driver, SQL, file system) is logged and
 * answered in words, so no query, stack or path reaches a client.
 */
export function toErrorResponse(error: unknown, context: string): Response {
  if (isDatabaseUnavailable(error)) {
    console.error(`[api] ${context}: the database is unavailable:`, describeCause(error));
    return errorResponse(503, DATABASE_UNAVAILABLE_MESSAGE, undefined, { "retry-after": String(DATABASE_RETRY_AFTER_S) });
  }
  if (error instanceof AppError) {
    if (error.code === "INTERNAL") console.error(`[api] ${context}: ${error.message}`, error.cause ?? "");
    const headers = error instanceof UnavailableError ? { "retry-after": String(error.retryAfterS) } : undefined;
    return errorResponse(statusOfCode[error.code], error.message, error.fieldErrors, headers);
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

/** A one-line cause for the log: a database outage is expected, its stack is noise. */
function describeCause(error: unknown): string {
  const parts: string[] = [];
  for (let current = error; current && typeof current === "object"; current = (current as { cause?: unknown }).cause) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === "string" || typeof message === "string") parts.push([code, message].filter(Boolean).join(" "));
  }
  return parts.at(-1) ?? String(error);
}
