import { accountLifecycleOperations, accountOperations } from "@/lib/accounts/operations";
import { databaseOperations, databaseUserOperations } from "@/lib/databases/operations";
import { dnsOperations } from "@/lib/dns/operations";
import { domainOperations } from "@/lib/domains/operations";
import { metricsOperations } from "@/lib/metrics/operations";
import { moveOperations } from "@/lib/moves/operations";
import { nodeOperations } from "@/lib/nodes/operations";
import { backupOperations } from "@/lib/backups/operations";
import { cronOperations } from "@/lib/cron/operations";
import { emailOperations } from "@/lib/email/operations";
import { phpSettingsOperations } from "@/lib/php-settings/operations";
import { sshOperations } from "@/lib/ssh/operations";
import { ssoOperations } from "@/lib/sso/operations";
import { endpointOf, type HttpMethod, type Operation } from "./operation";

/** Every operation of the API, in the order of SPEC.md. */
export const operations: readonly Operation[] = [
  ...Object.values(ssoOperations),
  ...Object.values(accountLifecycleOperations),
  ...Object.values(metricsOperations),
  ...Object.values(accountOperations),
  ...Object.values(databaseOperations),
  ...Object.values(databaseUserOperations),
  ...Object.values(dnsOperations),
  ...Object.values(domainOperations),
  ...Object.values(sshOperations),
  ...Object.values(phpSettingsOperations),
  ...Object.values(cronOperations),
  ...Object.values(emailOperations),
  ...Object.values(backupOperations),
  ...Object.values(nodeOperations),
  ...Object.values(moveOperations),
];

const endpoints = new Set(operations.map(endpointOf));

/** Whether "METHOD /api/path/{param}" names an operation (a key's endpoint list). */
export const isKnownEndpoint = (endpoint: string) => endpoints.has(endpoint);

// Paths under /api served outside the registry: the OpenAPI document, next-auth, and a node's
// enrolment (its token is the credential, not an API key).
const extraRoutes: { pattern: RegExp; methods: HttpMethod[] | "any" }[] = [
  { pattern: /^\/api\/openapi\.json$/, methods: ["GET"] },
  { pattern: /^\/api\/nodes\/join$/, methods: ["POST"] },
  { pattern: /^\/api\/auth\/.+$/, methods: "any" },
];

export type RouteMatch = { kind: "found" } | { kind: "not_found" } | { kind: "wrong_method"; allow: string[] };

const FOUND: RouteMatch = { kind: "found" };
const NOT_FOUND: RouteMatch = { kind: "not_found" };

/** The answer for a path's methods, built once: found for allowed ones, else 405 with `allow`. */
function answersFor(methods: HttpMethod[] | "any"): (method: string) => RouteMatch {
  if (methods === "any") return () => FOUND;
  const allow = methods.includes("GET") ? [...methods, "HEAD"] : methods;
  const wrongMethod: RouteMatch = { kind: "wrong_method", allow };
  return (method) => (allow.includes(method) ? FOUND : wrongMethod);
}

const paths = [...new Set(operations.map((operation) => operation.path))].map((path) => ({
  path,
  answer: answersFor(operations.filter((operation) => operation.path === path).map((operation) => operation.method)),
}));
/** Paths without parameters, found by one lookup ("/api/client/domains"; a trailing slash is allowed). */
const literalPaths = new Map(paths.filter(({ path }) => !path.includes("{")).map(({ path, answer }) => [path, answer]));
const patterns = [
  ...extraRoutes.map(({ pattern, methods }) => ({ pattern, answer: answersFor(methods) })),
  ...paths
    .filter(({ path }) => path.includes("{"))
    .map(({ path, answer }) => ({
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+").replace(/\./g, "\\.")}/?$`),
      answer,
    })),
];

/** How the API answers a method and path before any handler runs (404 and 405 come from here). */
export function matchApiRoute(method: string, pathname: string): RouteMatch {
  const literal = literalPaths.get(pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname);
  if (literal) return literal(method);
  for (const { pattern, answer } of patterns) {
    if (pattern.test(pathname)) return answer(method);
  }
  return NOT_FOUND;
}
