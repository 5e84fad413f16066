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
  /** A real server fault whose message is safe to show ("Could not read metrics history: …"). */
  | "INTERNAL";

export type FieldErrors = Record<string, string[]>;

export class AppError extends Error {
  constructor(
    readonly code: AppErrorCode,
    message: string,
    readonly fieldErrors?: FieldErrors,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "AppError";
  }
}

export const notFound = (what: string) => new AppError("NOT_FOUND", `${what} not found`);

/** A 503: something the change needs does not answer now; the client is told when to try again (Retry-After). */
export class UnavailableError extends AppError {
  constructor(
    message: string,
    readonly retryAfterS: number,
  ) {
    super("UNAVAILABLE", message);
  }
}

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

// Failures that mean "the database server is not reachable right now" rather than "this query is
// wrong". postgres.js's own connection codes and PostgreSQL's connection-exception (08…) and
// operator-intervention (57P01–57P03: shutting down, starting up) classes name the database
// wherever they appear in a cause chain.
const DATABASE_UNREACHABLE_CODES = new Set([
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "57P01",
  "57P02",
  "57P03",
]);

// Socket codes any network client can raise (a MariaDB server, an ACME directory, a child's
// pipe): they name the database only on an error postgres.js failed a query with, which carries
// that query (its `query` property).
const SOCKET_UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

export const DATABASE_UNAVAILABLE_MESSAGE = "The database is unavailable; try again shortly";

/** True when `error` (or an error it wraps) says the database server cannot be reached now. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error; current && typeof current === "object"; ) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") {
      if (DATABASE_UNREACHABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
      if (SOCKET_UNREACHABLE_CODES.has(code) && "query" in current) return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
