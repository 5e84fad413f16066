// Errors a service throws on purpose. lib/http/respond.ts maps each code to its status once;
// services never speak HTTP.

export type AppErrorCode =
  | "BAD_REQUEST"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "CONFLICT"
  | "VALIDATION"
  | "UNAVAILABLE"
  | "NOT_IMPLEMENTED"
  // An admin operation that could not complete; the message names what failed and why (SPEC: 500 {error}).
  | "INTERNAL";

export type FieldErrors = Record<string, string[]>;

export class AppError extends Error {
  constructor(
    readonly code: AppErrorCode,
    message: string,
    readonly fieldErrors?: FieldErrors,
  ) {
    super(message);
    this.name = "AppError";
  }
}

export const notFound = (what: string) => new AppError("NOT_FOUND", `${what} not found`);

/** A 422 for one field: `validationError("database_name", "is already taken")`. */
export function validationError(field: string, message: string): AppError {
  return new AppError("VALIDATION", `${field} ${message}`, { [field]: [message] });
}

/** PostgreSQL's error code of a failed query (23505 unique, 23503 foreign key…), if any. */
export function pgErrorCode(error: unknown): string | undefined {
  for (let current = error; current && typeof current === "object"; ) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
